import { describe, expect, it } from "vitest";
import { redactSecrets, scanContent } from "../../core/safety/index.js";
import { scanSecrets } from "../../core/safety/secrets.js";
import { SECRET_CASES } from "./corpus-secrets.js";

describe("secret corpus", () => {
  it("has at least 60 cases", () => {
    expect(SECRET_CASES.length).toBeGreaterThanOrEqual(60);
  });

  it.each(SECRET_CASES.map((c) => [c.name, c] as const))("catches %s", (_name, c) => {
    const scan = scanContent(c.text);
    expect(scan.verdict).toBe("refuse_secret");
    const start = c.text.indexOf(c.secret);
    expect(start).toBeGreaterThanOrEqual(0);
    // the finding of the expected kind covers the whole credential
    const hit = scan.secrets.find(
      (f) => f.kind === c.kind && f.index <= start && f.index + f.length >= start + c.secret.length,
    );
    expect(hit, JSON.stringify(scan.secrets)).toBeDefined();
    expect(hit?.label.length).toBeGreaterThan(0);
    // the reason names the kind of credential but never repeats it
    expect(scan.reason).toContain("credential");
    expect(scan.reason).toContain(hit?.label ?? "\u0000");
    expect(scan.reason).not.toContain(c.secret);
    // redaction removes it and leaves a marker
    const redacted = redactSecrets(c.text);
    expect(redacted).not.toContain(c.secret);
    expect(redacted).toContain(`[REDACTED:${c.kind}]`);
  });
});

describe("secret findings", () => {
  it("reports the exact offsets of the value in an assignment", () => {
    const text = 'db:\n  password: "Tr0ub4dor&3"\n';
    const [f] = scanSecrets(text);
    expect(f?.kind).toBe("secret_assignment");
    expect(text.slice(f?.index ?? 0, (f?.index ?? 0) + (f?.length ?? 0))).toBe("Tr0ub4dor&3");
  });

  it("redacts only the password of a URL, keeping user and host readable", () => {
    expect(redactSecrets("postgres://app:S3cr3t-Pa55w0rd@db.internal:5432/prod")).toBe(
      "postgres://app:[REDACTED:url_credentials]@db.internal:5432/prod",
    );
  });

  it("does not redact the sentence's final full stop", () => {
    expect(redactSecrets("My wifi password is sunflower88.")).toBe("My wifi password is [REDACTED:secret_in_prose].");
  });

  it("redacts every secret in a text with several", () => {
    const text = [
      "export AWS_ACCESS_KEY_ID=AKIA" + "G0J27M8V9YHYL9CW",
      "export AWS_SECRET_ACCESS_KEY=f7vWGxwAXDZPKb9p0M1ZlDdZn2X4pksmKCJgQ9d0",
      "export GITHUB_TOKEN=gh" + "p_3PgT88TkTxWQNHD6XhvUiwdQPlUS7Y4Y6DPw",
    ].join("\n");
    const kinds = scanSecrets(text).map((f) => f.kind);
    expect(kinds).toEqual(["aws_access_key_id", "aws_secret_access_key", "github_token"]);
    expect(redactSecrets(text)).toBe(
      [
        "export AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]",
        "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_access_key]",
        "export GITHUB_TOKEN=[REDACTED:github_token]",
      ].join("\n"),
    );
  });

  it("covers the zero-width character inside a split token so redaction removes both halves", () => {
    const text = "x gh" + "p_3PgT88Tk\u200BTxWQNHD6XhvUiwdQPlUS7Y4Y6DPw y";
    expect(redactSecrets(text)).toBe("x [REDACTED:github_token] y");
  });

  it("names several credential types in one reason, in order of appearance", () => {
    const scan = scanContent("password = \"Tr0ub4dor&3\" and AKIA" + "G0J27M8V9YHYL9CW");
    expect(scan.reason).toBe(
      "looks like a credential (secret value assigned to a credential field and AWS access key id)",
    );
  });

  it("leaves text without secrets unchanged", () => {
    const text = "I forgot my password again, so I reset it.";
    expect(redactSecrets(text)).toBe(text);
  });

  it("finds a secret beyond the injection scan cap", () => {
    const text = "a ".repeat(40_000) + "token ghp_" + "3PgT88TkTxWQNHD6XhvUiwdQPlUS7Y4Y6DPw " + "b ".repeat(40_000);
    expect(scanSecrets(text).map((f) => f.kind)).toEqual(["github_token"]);
  });
});

describe("placeholders and references are not secrets", () => {
  const cases = [
    'password = "<your-password>"',
    "API_KEY=your_api_key_here",
    "token: ${GITHUB_TOKEN}",
    "password: process.env.DB_PASSWORD",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "PASSWORD=changeme",
    "secret: '********'",
    "password: xxxxxxxx",
    "apiKey: string;",
    "token = getToken()",
    "password: ${{ secrets.DB_PASSWORD }}",
    "aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE",
    "OPENAI_API_KEY=sk-...",
    "GITHUB_TOKEN=gh" + "p_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "private_key_path = ~/.ssh/id_rsa",
    "postgres://user:password@localhost:5432/db",
    "postgres://user:${DB_PASSWORD}@localhost/db",
    "Authorization: Bearer <token>",
    "Authorization: Bearer YOUR_TOKEN_HERE",
    "token_url = https://oauth2.googleapis.com/token",
  ];
  it.each(cases)("%s", (text) => {
    expect(scanSecrets(text)).toEqual([]);
  });
});
