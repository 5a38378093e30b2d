// Fake credentials with realistic shapes (random bodies, not real keys). Prefixes are joined at
// run time so repository secret scanners do not mistake this file for a leak.
import type { SecretKind } from "../../core/safety/secrets.js";

export interface SecretCase {
  name: string;
  kind: SecretKind;
  text: string;
  /** the credential itself: must be covered by a finding and absent after redaction */
  secret: string;
}

const t = (...parts: string[]): string => parts.join("");

const PEM_BODY = [
  "QDrGNn/37aPFDGVqeHwvaJrO4ErBEDlTXurPiHlLHezHdUBA5ML3rzwl8YSYLYBU",
  "kwEkYKL4qirrmx9xkKm4JRqKCYEqjr+j0an4U9HgJCdGSyizvG4GWAXCZzs1YdcM",
  "nUNga8QMhpBrrVb6Svg2FacD034+4G/gtxEACtZ9iz3UBWcb/fX1AvXVkxFvOg9J",
  "FtTJZmBklrgIs9fl5eDpAcHwYTyqw60Mha8rBuEwVJYvZN/fvxGGTzDiDJaLlLwJ",
  "pM2SRYhv+/8AT4HLJ2HJTbrZmdaezQeI/CUeLsAVl+ND6tWvPdiX3F5j/JlFMSx5",
].join("\n");

const pem = (label: string): string => t("-----BEGIN ", label, "-----\n", PEM_BODY, "\n-----END ", label, "-----");

const JWT = t(
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
  ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgUm9lIiwiaWF0IjoxNzE2MjM5MDIyfQ",
  ".1yhRrkuh9NfcS30jD7o8kw35VuS7gZxRKlGkapvnZz5",
);

const GHP = t("ghp_", "3PgT88TkTxWQNHD6XhvUiwdQPlUS7Y4Y6DPw");
const OPENAI = t("sk-", "KUIYmZj0rWkx7UnekR3pnEH1eIwII0PEQ4m8WkgTDlCKVoIt");

const c = (name: string, kind: SecretKind, secret: string, text: string = secret): SecretCase => ({
  name,
  kind,
  secret,
  text,
});

export const SECRET_CASES: SecretCase[] = [
  // AWS
  c("aws key id in assignment", "aws_access_key_id", t("AKIA", "G0J27M8V9YHYL9CW"), t("aws_access_key_id = AKIA", "G0J27M8V9YHYL9CW")),
  c("aws session key id in export", "aws_access_key_id", t("ASIA", "FIYP8382NED21X2E"), t("export AWS_ACCESS_KEY_ID=ASIA", "FIYP8382NED21X2E")),
  c("aws key id in prose", "aws_access_key_id", t("AKIA", "0PS90RRYJBTDLYA3"), t("The deploy user's key is AKIA", "0PS90RRYJBTDLYA3, rotate it monthly.")),
  c("aws secret in ini", "aws_secret_access_key", "f7vWGxwAXDZPKb9p0M1ZlDdZn2X4pksmKCJgQ9d0", "[default]\naws_secret_access_key = f7vWGxwAXDZPKb9p0M1ZlDdZn2X4pksmKCJgQ9d0"),
  c("aws secret in cli json", "aws_secret_access_key", "IViLi7w84YOSu4txfhEu809QakPbf99dVpBA3HRw", '{"Credentials": {"SecretAccessKey": "IViLi7w84YOSu4txfhEu809QakPbf99dVpBA3HRw"}}'),
  // GitHub
  c("github classic pat in clone url", "github_token", GHP, t("git clone https://", GHP, "@github.com/acme/infra.git")),
  c("github oauth token env", "github_token", t("gho_", "bFQQkLdqqzbp5j9khyBdAoDhBFDArWuQLoZW"), t("GITHUB_TOKEN=gho_", "bFQQkLdqqzbp5j9khyBdAoDhBFDArWuQLoZW")),
  c("github user-to-server token", "github_token", t("ghu_", "EDprg7ZCb26WrQmloX8mRpVr4jXYLq4nOWBg"), t("Use ghu_", "EDprg7ZCb26WrQmloX8mRpVr4jXYLq4nOWBg for the app install.")),
  c("github server token", "github_token", t("ghs_", "ahOfqRaTvM04ufcto7w3TT1kQ2C4gVgx0ptF")),
  c("github refresh token", "github_token", t("ghr_", "GJYWm5V19Msuqxct2WiHMZHsttlHKqMY7F6H"), t("refresh with ghr_", "GJYWm5V19Msuqxct2WiHMZHsttlHKqMY7F6H")),
  c(
    "github fine-grained pat",
    "github_token",
    t("github_pat_", "TiOP3eQz5LBvK4u0qdiYEB_2nbTWK7uAydLUi5S3scLFI3B7fi0r8xS6kuaEyxM3HIlsnoXi1VCyNjgqLS"),
    t("The CI uses github_pat_", "TiOP3eQz5LBvK4u0qdiYEB_2nbTWK7uAydLUi5S3scLFI3B7fi0r8xS6kuaEyxM3HIlsnoXi1VCyNjgqLS as its token."),
  ),
  // GitLab, Slack, Discord
  c("gitlab pat", "gitlab_token", t("glpat-", "iVb53DaRXwmKl46NqaoH"), t("gitlab token: glpat-", "iVb53DaRXwmKl46NqaoH")),
  c("slack bot token", "slack_token", t("xoxb-", "017773774106-6055595650503-O7dujcJJj3i3dh5BYTLEziFt")),
  c(
    "slack user token",
    "slack_token",
    t("xoxp-", "397185683356-212915594595-2977899882302-716c830668112d829bcef46272d04c39"),
    t("SLACK_USER=xoxp-", "397185683356-212915594595-2977899882302-716c830668112d829bcef46272d04c39"),
  ),
  c(
    "slack webhook",
    "slack_webhook",
    t("https://hooks.slack.com/services/", "TL8OIRCYY/BSQWKOMLY/oklFJnVIYUKtL9m6f7UE6afd"),
    t("Alerts post to https://hooks.slack.com/services/", "TL8OIRCYY/BSQWKOMLY/oklFJnVIYUKtL9m6f7UE6afd daily."),
  ),
  c(
    "discord webhook",
    "discord_webhook",
    t("https://discord.com/api/webhooks/", "352625597415138823/zrsbSiyE20K3_z1mFhfQYcNxXUOLD5iNGit3j3mOgfIO7sSsDvA0lyx5HcV8137Te1uP"),
  ),
  // OpenAI, Anthropic
  c("openai legacy key", "openai_api_key", OPENAI, t("my key is ", OPENAI)),
  c(
    "openai project key",
    "openai_api_key",
    t("sk-proj-", "mIJfuGvyL5HPwRZCT3QgHSb-VjmCQgi-uKKD5bjErlrz2UGyhOLYNOz4KrEJfr40HklysneI88T3BlbkFJp50EUNuyngVZpmtmcIUVDscinj2xbj3q5stZ3K4n0BjXVpdz7Ee-IZC8tmXmXGGGB6i98QyOhN"),
  ),
  c("openai key env quoted", "openai_api_key", t("sk-", "Fq8ZlN2vR7xKp3TbWc9MhJ4yAe6GdU1sLo5Xi0Vn"), t('OPENAI_API_KEY="sk-', 'Fq8ZlN2vR7xKp3TbWc9MhJ4yAe6GdU1sLo5Xi0Vn"')),
  c(
    "anthropic key",
    "anthropic_api_key",
    t("sk-ant-", "api03-ANjo5IdiUNdiYtyjjqJbtSLi6U9NfBsyLl48HN0GZNbB-WEyopQ88bLUML46p1cRGs-m2HJz_7y5i2alE3cYB8KlrLfgtAA"),
    t("ANTHROPIC_API_KEY=sk-ant-", "api03-ANjo5IdiUNdiYtyjjqJbtSLi6U9NfBsyLl48HN0GZNbB-WEyopQ88bLUML46p1cRGs-m2HJz_7y5i2alE3cYB8KlrLfgtAA"),
  ),
  // Google
  c("google api key", "google_api_key", t("AIza", "qd9_dzK7us8XN0lSI4lTv61kceU-SeailNW")),
  c(
    "google api key in url",
    "google_api_key",
    t("AIza", "dxl_0tyTSYYWHmlK_JfMa0xiQEJzKfYwq2Y"),
    t("https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=AIza", "dxl_0tyTSYYWHmlK_JfMa0xiQEJzKfYwq2Y"),
  ),
  c("google oauth client secret", "google_oauth_secret", t("GOCSPX-", "wkSKFCST1gQA8gMeR_Zimv1QdTQi")),
  c("google oauth access token", "google_oauth_token", t("ya29.", "J_KBUwaXx2ZzMuShe8LPvhtj8uxTcP6B95XkOhe7-pc-Y8d-GIbI72yVvQ6t")),
  // Stripe
  c("stripe live key", "stripe_secret_key", t("sk_live_", "XcYFnAg72bACulmCbt1Fun8n"), t("stripe.api_key = 'sk_live_", "XcYFnAg72bACulmCbt1Fun8n'")),
  c("stripe restricted key", "stripe_secret_key", t("rk_live_", "diypDatbll5SW9A0kccrMlkr")),
  c("stripe test key", "stripe_secret_key", t("sk_test_", "QNGE6y0kPkjKLVEiC8Rh8AHQ")),
  c("stripe webhook secret", "stripe_webhook_secret", t("whsec_", "lf9iF6utrUNcUZwnnOJOLr7DVKC74AOz")),
  // Twilio, SendGrid, npm, PyPI, Hugging Face
  c("twilio api key sid", "twilio_api_key", t("SK", "a0e459728b99368f75b456207dc971aa")),
  c("twilio auth token", "twilio_auth_token", "ede5149563335f0fa8ecfa515a599d15", "TWILIO_AUTH_TOKEN=ede5149563335f0fa8ecfa515a599d15"),
  c("sendgrid key", "sendgrid_api_key", t("SG.", "NjuIAUB5PHOMKJ9vT227sk.4EGRnYGN0gAodcM4rJk-LRZCT9sx215INkJ628zQLsb")),
  c(
    "npm token in npmrc",
    "npm_token",
    t("npm_", "u9Kgn6brupkdVxAv8PFdctZ5XqVrg1sjuw3j"),
    t("//registry.npmjs.org/:_authToken=npm_", "u9Kgn6brupkdVxAv8PFdctZ5XqVrg1sjuw3j"),
  ),
  c("pypi token", "pypi_token", t("pypi-", "AgEIcHlwaS5vcmcetq5LIQdKW_WNGdOd3-OVy9lQKMP1aQgslWnm84kd9tJeuutRMJh7DgyHOya")),
  c("hugging face token", "huggingface_token", t("hf_", "MkNINbdpOkLOfQeMVagSBWPyGaZBUmOQZT")),
  c("hugging face token with digits", "huggingface_token", t("hf_", "U8cELYtaB1GrhsrJBNxXqlERzmWkrlVawO"), t("HF_TOKEN: hf_", "U8cELYtaB1GrhsrJBNxXqlERzmWkrlVawO")),
  // JWT
  c("jwt in bearer header", "jwt", JWT, t("Authorization: Bearer ", JWT)),
  c("jwt in cookie", "jwt", JWT, t("Cookie: session=", JWT, "; Path=/")),
  // private keys
  c("rsa private key", "pem_private_key", pem("RSA PRIVATE KEY")),
  c("openssh private key", "pem_private_key", pem("OPENSSH PRIVATE KEY"), t("id_ed25519:\n", pem("OPENSSH PRIVATE KEY"))),
  c("pgp private key block", "pem_private_key", pem("PGP PRIVATE KEY BLOCK")),
  c("pkcs8 private key", "pem_private_key", pem("PRIVATE KEY")),
  c("encrypted private key", "pem_private_key", pem("ENCRYPTED PRIVATE KEY")),
  c(
    "truncated ec private key",
    "pem_private_key",
    t("-----BEGIN EC PRIVATE KEY-----\n", PEM_BODY.split("\n").slice(0, 2).join("\n")),
    t("here is the key:\n-----BEGIN EC PRIVATE KEY-----\n", PEM_BODY.split("\n").slice(0, 2).join("\n"), "\n(rest omitted)"),
  ),
  // passwords in URLs
  c("postgres url", "url_credentials", "S3cr3t-Pa55w0rd", "DATABASE_URL=postgres://app:S3cr3t-Pa55w0rd@db.internal:5432/prod"),
  c("mongodb srv url", "url_credentials", "hunter2Xy!", "mongodb+srv://admin:hunter2Xy!@cluster0.ab1cd.mongodb.net/app"),
  c("redis url without user", "url_credentials", "pR0dR3disPw", "redis://:pR0dR3disPw@cache.internal:6379/0"),
  c("https url with encoded password", "url_credentials", "Gx7%21kP2q", "git remote add origin https://deploy:Gx7%21kP2q@git.example.com/repo.git"),
  c("amqp url", "url_credentials", "rabbitMQ2024", "amqp://guest:rabbitMQ2024@broker.local:5672/"),
  // Authorization headers
  c("basic auth header", "authorization_header", "ZGVwbG95OlN1cGVyU2VjcmV0MjAyNCE=", "Authorization: Basic ZGVwbG95OlN1cGVyU2VjcmV0MjAyNCE="),
  c(
    "bearer header in curl",
    "authorization_header",
    "9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c",
    'curl -H "Authorization: Bearer 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c" https://api.example.com/v1/me',
  ),
  c("token scheme header", "authorization_header", "ab12CD34ef56GH78ij90", "Authorization: Token ab12CD34ef56GH78ij90"),
  // generic assignments
  c("quoted password", "secret_assignment", "Tr0ub4dor&3", 'password = "Tr0ub4dor&3"'),
  c("env password", "secret_assignment", "Sup3rS3cret!", "DB_PASSWORD=Sup3rS3cret!"),
  c("json api_key", "secret_assignment", "a8f5f167f44f4964e6c998dee827110c", '{"api_key": "a8f5f167f44f4964e6c998dee827110c"}'),
  c("yaml client_secret", "secret_assignment", "8Q~xYz123_AbCdEfGhIjKlMnOpQrStUv", "oauth:\n  client_secret: 8Q~xYz123_AbCdEfGhIjKlMnOpQrStUv"),
  c("secret without spaces", "secret_assignment", "Xk9#mP2$vL5q", "secret=Xk9#mP2$vL5q"),
  c("token in yaml", "secret_assignment", "Zm9vYmFyYmF6cXV4MTIz", "token: Zm9vYmFyYmF6cXV4MTIz"),
  c("passwd field", "secret_assignment", "Winter2025!", "passwd: Winter2025!"),
  c("cli password flag", "secret_assignment", "Kj8sP0q!zz", "mysql -u root --password=Kj8sP0q!zz"),
  c("camelCase apiKey", "secret_assignment", "pk_9ZxA7bQ3mN1vC5", "const config = { apiKey: 'pk_9ZxA7bQ3mN1vC5' };"),
  c("private_key assignment", "secret_assignment", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 'private_key = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"'),
  c("x-api-key header", "secret_assignment", "k3Y-7hq2LmP9xZ", "X-API-Key: k3Y-7hq2LmP9xZ"),
  c("DB_PASS env", "secret_assignment", "Qw3rty!2024", "DB_PASS=Qw3rty!2024"),
  // stated in prose
  c("wifi password in prose", "secret_in_prose", "sunflower88", "My wifi password is sunflower88."),
  c("vault passphrase in prose", "secret_in_prose", "Blue-Canyon-42!", "Remember that the vault passphrase is Blue-Canyon-42!"),
  c("bank pin in prose", "secret_in_prose", "4821", "Her bank PIN is 4821"),
  c("router password in prose", "secret_in_prose", "Xq7!mn2Lp", "The router admin password was Xq7!mn2Lp"),
  c("password stated with a colon", "secret_in_prose", "Tr0ub4dor&3", "Jon's email password is: Tr0ub4dor&3"),
  // high-entropy strings next to a keyword
  c("webhook signing key", "high_entropy_secret", "T4qc5Lpx5eULEitAEkQXOQw424NBSES5j3KeNtIRMYW7", "the signing key for the webhook: T4qc5Lpx5eULEitAEkQXOQw424NBSES5j3KeNtIRMYW7"),
  c("deploy token hex", "high_entropy_secret", "03c20896fa01bcf07fe6f54553d9d571f16bc06d", "deploy token 03c20896fa01bcf07fe6f54553d9d571f16bc06d"),
  c(
    "encryption key hex",
    "high_entropy_secret",
    "e7c2a61fe58b2baf71cad087cfa8388c0700c797586c1e0668a756dfbf96d885",
    "Encryption key (AES-256): e7c2a61fe58b2baf71cad087cfa8388c0700c797586c1e0668a756dfbf96d885",
  ),
  // evasion: a zero-width space inside the token must not split it
  c("token split by zero-width space", "github_token", t("ghp_3PgT88Tk", "\u200B", "TxWQNHD6XhvUiwdQPlUS7Y4Y6DPw"), t("token ghp_3PgT88Tk", "\u200B", "TxWQNHD6XhvUiwdQPlUS7Y4Y6DPw")),
];
