// Which bind addresses and Host header names stay on this machine. The RAP endpoint and the admin
// API answer whoever reaches them (the admin API asks for a token, RAP for nothing), so binding
// anything else is a decision a person makes out loud.

const LOOPBACK_NAMES = new Set(["localhost", "::1", "[::1]"]);

/** whether `host` (an address or a Host header's name) is this machine's loopback */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_NAMES.has(h) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
