//! Redaction of obvious secrets before a memory is stored (`storage.redact_secrets`, on by
//! default): an agent that pastes a config file or a log into a memory should not make mira the
//! place where its credentials live.
//!
//! What counts as obvious, each replaced by `[REDACTED:<kind>]`:
//! - PEM private key blocks (`-----BEGIN … PRIVATE KEY-----` to the matching `END` line, or to
//!   the end of the base64 lines when the block is cut): `private_key`;
//! - API keys with a recognisable prefix: `sk-…` (OpenAI, Anthropic), `sk_live_…`/`rk_test_…`/`whsec_…`
//!   (Stripe), `AIza…` (Google): `api_key`; `AKIA…`/`ASIA…` (AWS access key ids): `aws_key`;
//!   `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…`: `github_token`; `xoxb-…`,
//!   `xoxp-…` and the other Slack prefixes: `slack_token`; `Bearer <long token>`: `token`;
//!   three-part `eyJ…` JSON Web Tokens: `jwt`;
//! - values of `key=value` / `key: value` pairs whose key names a credential (`password`,
//!   `passwd`, `secret`, `api_key`, `access_key`, `private_key`, `token`, with any prefix such as
//!   `DB_PASSWORD`, `client_secret` or `GITHUB_TOKEN`): the key and separator stay, the value becomes `[REDACTED:password]`,
//!   `[REDACTED:secret]`, `[REDACTED:token]` or `[REDACTED:api_key]`;
//! - the password of a URL (`postgres://app:s3cret@db:5432/x`, as connection strings and
//!   logs carry them): the user stays, the password becomes `[REDACTED:password]`.
//!
//! Redaction is idempotent (its own markers are never redacted again) and pure.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// The kind of a redacted secret (the `<kind>` of `[REDACTED:<kind>]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecretKind {
    /// A PEM private key block.
    PrivateKey,
    /// An API key with a known prefix, or the value of an `api_key=` pair.
    ApiKey,
    /// An AWS access key id.
    AwsKey,
    /// A GitHub token.
    GithubToken,
    /// A Slack token.
    SlackToken,
    /// A JSON Web Token.
    Jwt,
    /// The value of a `password=` pair.
    Password,
    /// The value of a `secret=` pair.
    Secret,
    /// The value of a `token=` pair.
    Token,
}

impl SecretKind {
    /// The name used in the marker.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private_key",
            SecretKind::ApiKey => "api_key",
            SecretKind::AwsKey => "aws_key",
            SecretKind::GithubToken => "github_token",
            SecretKind::SlackToken => "slack_token",
            SecretKind::Jwt => "jwt",
            SecretKind::Password => "password",
            SecretKind::Secret => "secret",
            SecretKind::Token => "token",
        }
    }

    /// The replacement text, `[REDACTED:<kind>]`.
    pub fn marker(self) -> String {
        format!("[REDACTED:{}]", self.as_str())
    }
}

impl std::fmt::Display for SecretKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of [`redact`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The text with every secret replaced by its marker.
    pub text: String,
    /// How many secrets of each kind were replaced, by kind (kinds with none are absent).
    pub counts: Vec<(SecretKind, usize)>,
}

impl Redacted {
    /// Total number of secrets replaced.
    pub fn total(&self) -> usize {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    /// Whether nothing was replaced.
    pub fn is_clean(&self) -> bool {
        self.counts.is_empty()
    }
}

static PEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----(?:[\s\S]*?-----END ((?:[A-Z0-9]+ )*)PRIVATE KEY-----|(?:\r?\n[A-Za-z0-9+/=]{4,})*)",
    )
    .expect("PEM pattern")
});

/// Secrets recognised by their shape alone, in the order they are applied.
static TOKENS: LazyLock<Vec<(SecretKind, Regex)>> = LazyLock::new(|| {
    [
        (SecretKind::GithubToken, r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        (SecretKind::SlackToken, r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}"),
        (SecretKind::AwsKey, r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        (SecretKind::ApiKey, r"\bsk-[A-Za-z0-9_\-]{20,}|\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9_]{8,}|\bAIza[0-9A-Za-z_\-]{35}"),
        (SecretKind::Token, r"\bBearer\s+[A-Za-z0-9\-._~+/]{16,}=*"),
        (SecretKind::Jwt, r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ]
    .into_iter()
    .map(|(k, p)| (k, Regex::new(p).expect("token pattern")))
    .collect()
});

/// `key = value` and `key: value` with a credential key; the value is a quoted string or a run
/// of characters up to white space, a comma, a semicolon or a closing bracket.
static PAIR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)\b([A-Za-z0-9_\-]*?(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|token))(["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|<[^>\n]*>|\$\{[^}\n]*\}|\{\{[^}\n]*\}\}|[^\s,;)\]}]+)"#,
    )
    .expect("pair pattern")
});

/// `scheme://user:password@`: the password (up to `@`, without `/` or white space).
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\[\]]*:)([^\s/@]+)(@)").expect("URL pattern")
});

fn pair_kind(key: &str) -> SecretKind {
    let k = key.to_ascii_lowercase();
    if k.contains("passw") {
        SecretKind::Password
    } else if k.contains("api") || k.contains("access_key") || k.contains("access-key") {
        SecretKind::ApiKey
    } else if k.contains("secret") || k.contains("private") {
        SecretKind::Secret
    } else {
        SecretKind::Token
    }
}

/// Whether a `key=value` value is worth redacting: not empty, not a marker, not a placeholder
/// such as `***`, `<password>`, `null` or `${VAR}` (which hold no secret).
fn is_secret_value(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    if v.chars().count() < 3 || v.contains("[REDACTED:") {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let placeholder = v.chars().all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '-'))
        || (v.starts_with('<') && v.ends_with('>'))
        || (v.starts_with("${") && v.ends_with('}'))
        || (v.starts_with("{{") && v.ends_with("}}"))
        || ["null", "none", "true", "false", "required", "redacted"].contains(&lower.as_str());
    !placeholder
}

fn bump(counts: &mut Vec<(SecretKind, usize)>, kind: SecretKind) {
    match counts.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, n)) => *n += 1,
        None => counts.push((kind, 1)),
    }
}

/// Replaces every obvious secret in `text` (see the module docs) by `[REDACTED:<kind>]`.
pub fn redact(text: &str) -> Redacted {
    let mut counts = Vec::new();
    let mut out = text.to_owned();
    if out.contains("PRIVATE KEY-----") {
        out = PEM
            .replace_all(&out, |_: &Captures<'_>| {
                bump(&mut counts, SecretKind::PrivateKey);
                SecretKind::PrivateKey.marker()
            })
            .into_owned();
    }
    for (kind, re) in TOKENS.iter() {
        if re.is_match(&out) {
            out = re
                .replace_all(&out, |_: &Captures<'_>| {
                    bump(&mut counts, *kind);
                    kind.marker()
                })
                .into_owned();
        }
    }
    if URL_PASSWORD.is_match(&out) {
        out = URL_PASSWORD
            .replace_all(&out, |c: &Captures<'_>| {
                if !is_secret_value(&c[2]) {
                    return c[0].to_owned();
                }
                bump(&mut counts, SecretKind::Password);
                format!("{}{}{}", &c[1], SecretKind::Password.marker(), &c[3])
            })
            .into_owned();
    }
    if PAIR.is_match(&out) {
        out = PAIR
            .replace_all(&out, |c: &Captures<'_>| {
                let value = &c[3];
                if !is_secret_value(value) {
                    return c[0].to_owned();
                }
                let kind = pair_kind(&c[1]);
                bump(&mut counts, kind);
                let quote = match value.chars().next() {
                    Some(q @ ('"' | '\'')) if value.len() > 1 && value.ends_with(q) => {
                        q.to_string()
                    }
                    _ => String::new(),
                };
                format!("{}{}{quote}{}{quote}", &c[1], &c[2], kind.marker())
            })
            .into_owned();
    }
    counts.sort();
    Redacted { text: out, counts }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kinds(text: &str) -> Vec<&'static str> {
        redact(text)
            .counts
            .iter()
            .map(|(k, _)| k.as_str())
            .collect()
    }

    #[test]
    fn api_keys_are_redacted() {
        let r = redact("use OPENAI key sk-proj-abcdefghijklmnopqrstuvwx1234 for the bot");
        assert_eq!(r.text, "use OPENAI key [REDACTED:api_key] for the bot");
        assert_eq!(r.counts, vec![(SecretKind::ApiKey, 1)]);
        assert_eq!(
            redact("anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789").text,
            "anthropic [REDACTED:api_key]"
        );
        assert_eq!(
            redact("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc").text,
            "stripe [REDACTED:api_key]"
        );
        assert_eq!(
            redact("webhook secret whsec_5f0a9d1c7b2e4a8f").text,
            "webhook secret [REDACTED:api_key]"
        );
        assert_eq!(
            redact("aws AKIAIOSFODNN7EXAMPLE in us-east-1").text,
            "aws [REDACTED:aws_key] in us-east-1"
        );
        assert_eq!(
            redact("gh ghp_16C7e42F292c6912E7710c838347Ae178B4a ok").text,
            "gh [REDACTED:github_token] ok"
        );
        assert_eq!(
            redact("slack xoxb-2638291-1234567890-AbCdEfGhIjKl").text,
            "slack [REDACTED:slack_token]"
        );
        assert_eq!(
            kinds("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
            vec!["jwt"]
        );
    }

    #[test]
    fn url_passwords_are_redacted() {
        let r =
            redact("DATABASE_URL=postgres://billing:Sup3r-S3cret@db.internal:5432/billing failed");
        assert_eq!(
            r.text,
            "DATABASE_URL=postgres://billing:[REDACTED:password]@db.internal:5432/billing failed"
        );
        assert_eq!(r.counts, vec![(SecretKind::Password, 1)]);
        for kept in [
            "https://example.com/a:b@c",
            "mailto:me@example.com",
            "redis://:${REDIS_PASSWORD}@cache:6379",
            "http://user:***@proxy:3128",
            "see http://[::1]:8080/x",
        ] {
            assert_eq!(redact(kept).text, kept, "{kept}");
        }
    }

    #[test]
    fn private_key_blocks_are_redacted() {
        let text = "deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZWQyNTUxOQ==\n-----END OPENSSH PRIVATE KEY-----\nthat's it";
        let r = redact(text);
        assert_eq!(r.text, "deploy key:\n[REDACTED:private_key]\nthat's it");
        assert_eq!(r.counts, vec![(SecretKind::PrivateKey, 1)]);
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc+/=";
        assert_eq!(redact(cut).text, "[REDACTED:private_key]");
        // A public key or certificate is not a secret.
        let public = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----";
        assert!(redact(public).is_clean());
    }

    #[test]
    fn credential_pairs_keep_their_key() {
        assert_eq!(
            redact("connect with password=hunter22 to the db").text,
            "connect with password=[REDACTED:password] to the db"
        );
        assert_eq!(
            redact("secret: s3cr3t-value\napi_key = abcdef123456").text,
            "secret: [REDACTED:secret]\napi_key = [REDACTED:api_key]"
        );
        assert_eq!(
            redact(r#"{"token": "abc.def.ghi", "user": "bob"}"#).text,
            r#"{"token": "[REDACTED:token]", "user": "bob"}"#
        );
        assert_eq!(
            redact("DB_PASSWORD='p@ss w0rd'; next").text,
            "DB_PASSWORD='[REDACTED:password]'; next"
        );
        assert_eq!(
            redact("Authorization: Bearer abcdef0123456789abcdef").text,
            "Authorization: [REDACTED:token]"
        );
        assert_eq!(
            redact("MY_APP_PASSWORD=x9x9x9 and csrf_token_name: form").text,
            "MY_APP_PASSWORD=[REDACTED:password] and csrf_token_name: form"
        );
        assert_eq!(
            kinds("AUTH_TOKEN=zzz999, my_passwd=qwerty"),
            vec!["password", "token"]
        );
    }

    #[test]
    fn ordinary_text_and_placeholders_are_kept() {
        for clean in [
            "We decided to migrate to PostgreSQL for v2. Rejected: MySQL.",
            "Tokens: 21 and a budget of 4000 tokens",
            "the token budget is tight",
            "set password=<your password> in the env",
            "password: ******** (ask Jean)",
            "token=${GITHUB_TOKEN} from the CI secrets",
            "secret: null",
            "the sk-learn pipeline; task-1234",
            "AKIA is the prefix of AWS key ids",
        ] {
            let r = redact(clean);
            assert!(r.is_clean(), "{clean:?} became {:?}", r.text);
            assert_eq!(r.text, clean);
        }
    }

    #[test]
    fn markers_are_not_redacted_again() {
        let once = redact("password=hunter22 key sk-abcdefghijklmnopqrstuvwxyz");
        assert_eq!(once.total(), 2);
        let twice = redact(&once.text);
        assert!(twice.is_clean(), "{:?}", twice.text);
        assert_eq!(twice.text, once.text);
    }

    proptest! {
        #[test]
        fn redaction_is_idempotent_and_never_panics(s in "\\PC{0,200}") {
            let once = redact(&s);
            let twice = redact(&once.text);
            prop_assert_eq!(&twice.text, &once.text);
            prop_assert!(twice.is_clean());
        }

        #[test]
        fn embedded_keys_never_survive(prefix in "[a-z ]{0,20}", body in "[A-Za-z0-9]{24,40}") {
            let text = format!("{prefix} sk-{body} end");
            let r = redact(&text);
            prop_assert!(!r.text.contains(&body));
            prop_assert!(r.text.contains("[REDACTED:api_key]"));
        }
    }
}
