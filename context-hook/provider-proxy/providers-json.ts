// The ~/.infinity/providers.json entry (reference §4.3 item 2: `{"<id>": {"command": [argv…]}}`)
// that puts the proxy in front of a provider.
import { execPath } from "node:process";

export interface ProvidersJsonOptions {
  id: string;
  /** the wrapped provider's argv */
  upstream: string[];
  /** the built CLI (dist/cli/main.js) */
  mainScript: string;
  /** extra proxy options, e.g. ["--infinity-home", "/home/me/.infinity"] */
  proxyArgs?: string[];
  node?: string;
}

export function proxyCommand(o: Omit<ProvidersJsonOptions, "id">): string[] {
  const [first, ...rest] = o.upstream;
  if (first === undefined) throw new Error("the upstream command is empty");
  const head = [o.node ?? execPath, o.mainScript, "provider-proxy", ...(o.proxyArgs ?? []), "--upstream"];
  // Upstream arguments that look like options would be read as the proxy's own: pass them after --.
  return rest.some((a) => a.startsWith("-")) ? [...head, first, "--", ...rest] : [...head, first, ...rest];
}

export function providersJson(o: ProvidersJsonOptions): Record<string, { command: string[] }> {
  return { [o.id]: { command: proxyCommand(o) } };
}
