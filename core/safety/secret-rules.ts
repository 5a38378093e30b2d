// The credential pattern table. Provider rules match token shapes that are unambiguous on their
// own; keyword rules (`password = …`, "my wifi password is …") need a plausible value, so prose
// about passwords and tokens is not flagged. All quantifiers are bounded (linear matching).
import { shannonEntropy } from "./entropy.js";
import { isPlaceholder, isPlausibleSecret, looksRandom } from "./secret-value.js";

export const SECRET_LABELS = {
  pem_private_key: "private key block",
  aws_access_key_id: "AWS access key id",
  aws_secret_access_key: "AWS secret access key",
  github_token: "GitHub token",
  gitlab_token: "GitLab token",
  slack_token: "Slack token",
  slack_webhook: "Slack webhook URL",
  discord_webhook: "Discord webhook URL",
  anthropic_api_key: "Anthropic API key",
  openai_api_key: "OpenAI API key",
  google_api_key: "Google API key",
  google_oauth_secret: "Google OAuth client secret",
  google_oauth_token: "Google OAuth access token",
  stripe_secret_key: "Stripe secret key",
  stripe_webhook_secret: "Stripe webhook secret",
  twilio_api_key: "Twilio API key",
  twilio_auth_token: "Twilio auth token",
  sendgrid_api_key: "SendGrid API key",
  npm_token: "npm token",
  pypi_token: "PyPI token",
  huggingface_token: "Hugging Face token",
  azure_storage_key: "Azure storage or service-bus account key",
  azure_sas_signature: "Azure shared access signature",
  digitalocean_token: "DigitalOcean token",
  shopify_token: "Shopify access token",
  telegram_bot_token: "Telegram bot token",
  alibaba_access_key_id: "Alibaba Cloud access key id",
  databricks_token: "Databricks token",
  vault_token: "HashiCorp Vault token",
  age_secret_key: "age secret key",
  mailgun_api_key: "Mailgun API key",
  putty_private_key: "PuTTY private key",
  jwt: "JSON Web Token",
  url_credentials: "password in a URL",
  authorization_header: "Authorization header credential",
  secret_assignment: "secret value assigned to a credential field",
  secret_in_prose: "password or key stated in text",
  high_entropy_secret: "high-entropy string next to a credential keyword",
} as const;

export type SecretKind = keyof typeof SECRET_LABELS;

export interface SecretRule {
  kind: SecretKind;
  /** must carry the `g` and `d` flags */
  pattern: RegExp;
  /** capture groups holding the secret; the first that matched is used (default: whole match) */
  groups?: number[];
  validate?: (secret: string, m: RegExpExecArray) => boolean;
}

// Token bodies end where the token alphabet ends, so a longer run is not cut into a "match".
const END_B64URL = "(?![A-Za-z0-9_-])";

const mixed = (s: string): boolean => /[0-9]/.test(s) && /[A-Za-z]/.test(s);

/** Rules in priority order: when two findings overlap, the earlier rule's finding is kept. */
export const SECRET_RULES: SecretRule[] = [
  {
    kind: "aws_access_key_id",
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Za-z0-9])/dg,
    validate: (s) => looksRandom(s.slice(4)),
  },
  {
    kind: "aws_secret_access_key",
    pattern:
      /(?:aws_?secret_?(?:access_?)?key|secret_?access_?key|aws_?secret)["']?\s{0,3}(?::=|=>|=|:)\s{0,3}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
    groups: [1],
    validate: (s) => shannonEntropy(s) >= 3.5,
  },
  {
    kind: "github_token",
    pattern: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,251}(?![A-Za-z0-9])|\bgithub_pat_[A-Za-z0-9_]{22,255}(?![A-Za-z0-9_])/dg,
    validate: (s) => looksRandom(s.replace(/^(?:gh[pousr]_|github_pat_)/, "")),
  },
  {
    kind: "gitlab_token",
    pattern: new RegExp(`\\bgl(?:pat|dt|rt|ptt|soat|cbt|ft|imt)-[A-Za-z0-9_-]{20,64}${END_B64URL}`, "dg"),
    validate: (s) => looksRandom(s.slice(s.indexOf("-") + 1)),
  },
  {
    kind: "slack_webhook",
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{20,200}/dg,
    validate: (s) => !isPlaceholder(s.slice(s.lastIndexOf("/") + 1)) && looksRandom(s.slice(30)),
  },
  {
    kind: "discord_webhook",
    pattern: /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/[0-9]{5,30}\/[A-Za-z0-9_-]{20,100}/dg,
    validate: (s) => looksRandom(s.slice(s.lastIndexOf("/") + 1)),
  },
  {
    kind: "slack_token",
    pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,250}(?![A-Za-z0-9-])|\bxapp-[0-9]-[A-Za-z0-9-]{10,250}(?![A-Za-z0-9-])/dg,
    validate: (s) => /[0-9]/.test(s) && looksRandom(s.slice(5)),
  },
  {
    kind: "anthropic_api_key",
    pattern: new RegExp(`\\bsk-ant-[A-Za-z0-9_-]{20,250}${END_B64URL}`, "dg"),
    validate: (s) => mixed(s.slice(7)) && looksRandom(s.slice(7)),
  },
  {
    kind: "openai_api_key",
    pattern: new RegExp(`\\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,250}${END_B64URL}`, "dg"),
    // real keys mix upper, lower and digits; hyphenated words ("sk-learn-…") do not
    validate: (s) => /[0-9]/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s) && looksRandom(s.slice(3)),
  },
  {
    kind: "google_api_key",
    pattern: new RegExp(`\\bAIza[0-9A-Za-z_-]{35}${END_B64URL}`, "dg"),
    validate: (s) => looksRandom(s.slice(4)),
  },
  {
    kind: "google_oauth_secret",
    pattern: new RegExp(`\\bGOCSPX-[0-9A-Za-z_-]{24,40}${END_B64URL}`, "dg"),
    validate: (s) => looksRandom(s.slice(7)),
  },
  {
    kind: "google_oauth_token",
    pattern: new RegExp(`\\bya29\\.[0-9A-Za-z_-]{30,2000}${END_B64URL}`, "dg"),
    validate: (s) => mixed(s) && looksRandom(s.slice(5)),
  },
  {
    kind: "stripe_secret_key",
    pattern: /\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}(?![0-9A-Za-z])/dg,
    validate: (s) => looksRandom(s.slice(8)),
  },
  {
    kind: "stripe_webhook_secret",
    pattern: /\bwhsec_[A-Za-z0-9+/]{24,100}(?![A-Za-z0-9+/])/dg,
    validate: (s) => mixed(s.slice(6)) && looksRandom(s.slice(6)),
  },
  {
    kind: "twilio_api_key",
    pattern: /\bSK[0-9a-f]{32}(?![0-9A-Za-z])/dg,
    validate: (s) => looksRandom(s.slice(2)),
  },
  {
    kind: "twilio_auth_token",
    pattern: /twilio[A-Za-z_. -]{0,20}(?:auth_?token|token|secret)["']?\s{0,3}(?::=|=>|=|:|\bis\b)\s{0,3}["']?([0-9a-f]{32})(?![0-9A-Za-z])/dgi,
    groups: [1],
    validate: (s) => looksRandom(s),
  },
  {
    kind: "sendgrid_api_key",
    pattern: new RegExp(`\\bSG\\.[A-Za-z0-9_-]{16,32}\\.[A-Za-z0-9_-]{16,64}${END_B64URL}`, "dg"),
    validate: (s) => looksRandom(s.slice(3)),
  },
  {
    kind: "npm_token",
    pattern: /\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/dg,
    validate: (s) => looksRandom(s.slice(4)),
  },
  {
    kind: "pypi_token",
    pattern: new RegExp(`\\bpypi-[A-Za-z0-9_-]{50,300}${END_B64URL}`, "dg"),
    validate: (s) => looksRandom(s.slice(5)),
  },
  {
    kind: "huggingface_token",
    pattern: /\b(?:hf_|api_org_)[A-Za-z0-9]{30,40}(?![A-Za-z0-9])/dg,
    validate: (s) => {
      const body = s.replace(/^(?:hf_|api_org_)/, "");
      return /[A-Z]/.test(body) && /[a-z]/.test(body) && looksRandom(body);
    },
  },
  {
    kind: "azure_storage_key",
    // connection strings: "…;AccountKey=<base64>;…", "SharedAccessKey=<base64>"
    pattern: /\b(?:AccountKey|SharedAccessKey|AccessKey)\s{0,2}=\s{0,2}([A-Za-z0-9+/]{30,120}={0,2})(?![A-Za-z0-9+/=])/dg,
    groups: [1],
    validate: (s) => mixed(s) && shannonEntropy(s) >= 4.0 && looksRandom(s),
  },
  {
    kind: "azure_sas_signature",
    // a SAS URL or query: "sv=2022-11-02&…&sig=<url-encoded base64>"
    pattern: /\bsv=\d{4}-\d{2}-\d{2}&[^\s"'<>]{0,400}?\bsig=([A-Za-z0-9%+/]{30,200})/dg,
    groups: [1],
    validate: (s) => mixed(s) && looksRandom(s),
  },
  {
    kind: "digitalocean_token",
    pattern: /\bdo[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])/dg,
    validate: (s) => looksRandom(s.slice(7)),
  },
  {
    kind: "shopify_token",
    pattern: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])/dg,
    validate: (s) => looksRandom(s.slice(6)),
  },
  {
    kind: "telegram_bot_token",
    // "<bot id>:AA<33 chars>", often written after "bot" in API URLs
    pattern: /(?<![A-Za-z0-9])(?:bot)?[0-9]{8,10}:AA[A-Za-z0-9_-]{30,40}(?![A-Za-z0-9_-])/dg,
    validate: (s) => looksRandom(s.slice(s.indexOf(":") + 3)),
  },
  {
    kind: "alibaba_access_key_id",
    pattern: /\bLTAI[A-Za-z0-9]{12,24}(?![A-Za-z0-9])/dg,
    validate: (s) => mixed(s.slice(4)) && looksRandom(s.slice(4)),
  },
  {
    kind: "databricks_token",
    pattern: /\bdapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])/dg,
    validate: (s) => looksRandom(s.slice(4)),
  },
  {
    kind: "vault_token",
    pattern: new RegExp(`\\bhv[sbr]\\.[A-Za-z0-9_-]{24,300}${END_B64URL}`, "dg"),
    validate: (s) => mixed(s.slice(4)) && looksRandom(s.slice(4)),
  },
  {
    kind: "age_secret_key",
    pattern: /\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])/dg,
  },
  {
    kind: "mailgun_api_key",
    pattern: /\bkey-[0-9a-f]{32}(?![A-Za-z0-9])/dg,
    validate: (s) => mixed(s.slice(4)) && looksRandom(s.slice(4)),
  },
  {
    kind: "putty_private_key",
    pattern: /\bPrivate-Lines:\s{0,2}\d{1,3}\s{1,3}[A-Za-z0-9+/=]{16,200}/dg,
  },
  {
    kind: "jwt",
    pattern: new RegExp(`\\beyJ[A-Za-z0-9_-]{10,2000}\\.[A-Za-z0-9_-]{10,8000}\\.[A-Za-z0-9_-]{10,2000}${END_B64URL}`, "dg"),
  },
  {
    kind: "url_credentials",
    // the password (group 1) is what gets redacted; the user name and host stay readable
    pattern: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}:\/\/[^\s:/?#@"'<>]{0,128}:([^\s/?#@"'<>]{1,256})@(?=[A-Za-z0-9[.-])/dg,
    groups: [1],
    validate: (s) => isPlausibleSecret(decodeURIComponentSafe(s), "url_password", false),
  },
  {
    kind: "authorization_header",
    pattern:
      /\b(?:Proxy-)?Authorization["']?\s{0,3}[:=]\s{0,3}["']?(?:Bearer|Basic|Token|Bot|Digest)\s{1,3}([A-Za-z0-9._~+/-]{8,4096}=*)/dgi,
    groups: [1],
    validate: (s, m) => {
      if (isPlaceholder(s)) return false;
      if (/\bBasic\s/i.test(m[0])) return decodesToUserPass(s);
      return s.length >= 12 && mixed(s) && looksRandom(s);
    },
  },
  {
    kind: "authorization_header",
    // a bare "Bearer <token>" outside a header line: only long, random-looking tokens
    pattern: /\bBearer\s{1,3}([A-Za-z0-9._~+/-]{20,4096}=*)/dg,
    groups: [1],
    validate: (s) => mixed(s) && /[A-Z]/.test(s) && shannonEntropy(s) >= 3.5 && !isPlaceholder(s),
  },
  {
    kind: "secret_assignment",
    // NAME = value, NAME: value, "name": "value", --name=value. The keyword must end the name
    // (so `max_tokens`, `password_hash`, `tokenizer` are not credential fields); the pattern is
    // anchored on the keyword rather than the start of the name to stay linear.
    pattern:
      /(client[_-]?secret|api[_-]?secret|app[_-]?secret|secret[_-]?key|private[_-]?key|access[_-]?key|api[_-]?key|apikey|auth[_-]?token|access[_-]?token|refresh[_-]?token|session[_-]?token|passwords?|passwd|passphrase|pwd|pass|secret|token|credentials?)(?![A-Za-z0-9])["']?\s{0,3}(?::=|=>|=|:)\s{0,3}(?:"([^"\n]{1,200})"|'([^'\n]{1,200})'|`([^`\n]{1,200})`|([^\s"'`,;<>&]{1,200}))/dgi,
    groups: [2, 3, 4, 5],
    validate: (s, m) => {
      if (!startsName(m.input, m.index, (m[1] ?? "").toLowerCase() === "pass")) return false;
      const quoted = m[5] === undefined;
      return isPlausibleSecret(quoted ? s : trimTrailingPunctuation(s), "assignment", quoted);
    },
  },
  {
    kind: "secret_assignment",
    // .netrc lines: "machine host login user password <value>" (no = or :)
    pattern: /\bmachine\s{1,3}[^\s]{1,253}\s{1,3}(?:login\s{1,3}[^\s]{1,200}\s{1,3})?password\s{1,3}([^\s]{1,200})/dg,
    groups: [1],
    validate: (s) => isPlausibleSecret(s, "prose", false),
  },
  {
    kind: "secret_in_prose",
    // "my wifi password is Tr0ub4dor&3", "Bob's PIN is 4821", "the API key was AbC123…"
    pattern:
      /\b(?:my|the|his|her|their|our|your|its|this|that|[A-Za-z]{2,20}'s)\s{1,3}(?:[A-Za-z-]{1,20}\s{1,3}){0,2}?(passwords?|passcode|passphrase|pin(?:\s(?:code|number))?|api\skey|secret\skey|access\skey|access\stoken|auth\stoken|token)\s{1,3}(?:(?:is|was|is\snow|is\sset\sto)\s?:?|=|:)\s{1,3}["'“‘]?([^\s"'”’]{1,200})/dgi,
    groups: [2],
    validate: (s, m) => {
      const v = trimTrailingPunctuation(s);
      const keyword = (m[1] ?? "").toLowerCase();
      if (keyword.startsWith("pin")) return /^\d{4,8}$/.test(v);
      // a stated password is strong evidence; "the token is …" needs a token-like value
      return isPlausibleSecret(v, /^pass/.test(keyword) ? "prose" : "assignment", false);
    },
  },
];

export function trimTrailingPunctuation(s: string): string {
  return s.replace(/[.,;:)\]}]+$/, "");
}

/**
 * Whether a keyword at `at` ends a name rather than sitting inside a word: it starts the text,
 * follows a non-alphanumeric (`DB_PASSWORD`, `x-api-key`), or starts a camelCase part
 * (`clientSecret`). "pass" alone is too common a word, so it needs a separator (`DB_PASS`).
 */
function startsName(text: string, at: number, separatorRequired: boolean): boolean {
  const prev = text[at - 1];
  if (prev === undefined) return !separatorRequired;
  if (/[_.-]/.test(prev)) return true;
  if (separatorRequired) return false;
  if (!/[A-Za-z0-9]/.test(prev)) return true;
  return /[a-z0-9]/.test(prev) && /[A-Z]/.test(text[at] ?? "");
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function decodesToUserPass(b64: string): boolean {
  if (!/^[A-Za-z0-9+/]+=*$/.test(b64)) return false;
  const decoded = Buffer.from(b64, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && colon < decoded.length - 1 && /^[\x20-\x7e]+$/.test(decoded);
}

