//! Bearer tokens on mira's HTTP routers (`Authorization: Bearer <token>`).
//!
//! [`protect`] puts a whole router behind one token (the metrics server's
//! `metrics.auth_token`). [`authenticate`] is in front of the MCP transport and the memory
//! browser: it finds which of `mcp.http.auth_token` (every right) and the scoped tokens of
//! `mcp.http.tokens` the request presents, and hands the use cases the caller's [`Access`] in
//! the request's extensions; with no token configured every request gets the local user's
//! (which the exposure rule allows only on a loopback address, or with `--insecure-no-auth`).
//! Tokens are compared by their SHA-256 digests (the config keeps scoped tokens only as
//! digests), in constant time over every configured token.

use crate::config::McpHttpConfig;
use crate::usecases::access::{Access, Wings};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The settings of the tokens the MCP transport and the memory browser take.
pub(crate) const TOKEN_SETTINGS: &str = "mcp.http.auth_token or mcp.http.tokens";

/// The SHA-256 of `token` in lower-case hex: what `mcp.http.tokens` keeps of it.
pub fn sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The tokens an HTTP server accepts, each with the rights it gives.
#[derive(Debug, Clone)]
pub struct Credentials {
    tokens: Vec<([u8; 32], Access)>,
}

impl Credentials {
    /// The tokens of `mcp.http` (`auth_token`, `tokens`). The config was validated: each
    /// scoped token's `sha256` is 64 hex digits.
    pub fn of(http: &McpHttpConfig) -> Credentials {
        let mut tokens = Vec::new();
        if let Some(t) = http.auth_token.as_deref().filter(|t| !t.is_empty()) {
            tokens.push((Sha256::digest(t.as_bytes()).into(), Access::auth_token()));
        }
        for t in &http.tokens {
            if let Some(digest) = digest_of_hex(&t.sha256) {
                let access = Access::token(
                    &t.name,
                    Wings::from_list(&t.read),
                    Wings::from_list(&t.write),
                    t.destructive,
                );
                tokens.push((digest, access));
            }
        }
        Credentials { tokens }
    }

    /// Whether no token is configured (every request is the local user's).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The rights of the presented `Authorization` header value, if it carries a known token.
    /// Every configured token is compared, whichever matches.
    fn access(&self, header: &[u8]) -> Option<Access> {
        let token = header
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case(b"bearer "))
            .map(|_| header[7..].trim_ascii())?;
        let given: [u8; 32] = Sha256::digest(token).into();
        let mut found = None;
        for (digest, access) in &self.tokens {
            if constant_time_eq(&given, digest) {
                found = Some(access.clone());
            }
        }
        found
    }
}

/// 32 bytes from 64 hex digits.
fn digest_of_hex(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.trim().as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

/// `router` with each request's [`Access`] found from its bearer token (401 when tokens are
/// configured and none matches).
pub fn authenticate<S: Clone + Send + Sync + 'static>(
    router: axum::Router<S>,
    credentials: Arc<Credentials>,
) -> axum::Router<S> {
    router.layer(axum::middleware::from_fn_with_state(credentials, identify))
}

async fn identify(
    State(credentials): State<Arc<Credentials>>,
    mut request: Request,
    next: Next,
) -> Response {
    let access = if credentials.is_empty() {
        Some(Access::local())
    } else {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        credentials.access(given)
    };
    match access {
        Some(access) => {
            request.extensions_mut().insert(access);
            next.run(request).await
        }
        None => unauthorized(TOKEN_SETTINGS),
    }
}

/// What a protected router checks: the expected header value and the config key to name.
struct Expected {
    header: String,
    setting: &'static str,
}

/// `router` requiring `Authorization: Bearer <token>` when `token` is set and not empty;
/// a refusal names `setting` (the config key holding the token).
pub fn protect<S: Clone + Send + Sync + 'static>(
    router: axum::Router<S>,
    token: Option<&str>,
    setting: &'static str,
) -> axum::Router<S> {
    match token.filter(|t| !t.is_empty()) {
        Some(token) => router.layer(axum::middleware::from_fn_with_state(
            Arc::new(Expected {
                header: format!("Bearer {token}"),
                setting,
            }),
            require_token,
        )),
        None => router,
    }
}

async fn require_token(
    State(expected): State<Arc<Expected>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if constant_time_eq(given, expected.header.as_bytes()) {
        next.run(request).await
    } else {
        unauthorized(expected.setting)
    }
}

fn unauthorized(setting: &str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        format!("missing or wrong bearer token ({setting})\n"),
    )
        .into_response()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScopedToken;

    #[test]
    fn token_comparison() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"Bearer abc"));
    }

    #[test]
    fn tokens_are_found_by_digest() {
        let http = McpHttpConfig {
            auth_token: Some("root-secret".into()),
            tokens: vec![ScopedToken {
                name: "ci".into(),
                sha256: sha256_hex("ci-secret").to_uppercase(),
                read: vec!["a".into()],
                write: vec![],
                destructive: false,
            }],
            ..McpHttpConfig::default()
        };
        let c = Credentials::of(&http);
        assert_eq!(c.access(b"Bearer root-secret"), Some(Access::auth_token()));
        let ci = c.access(b"bearer  ci-secret").expect("scoped token");
        assert_eq!(ci.who(), "token 'ci'");
        assert!(ci.may_read("a") && !ci.may_read("b"));
        assert_eq!(c.access(b"Bearer nope"), None);
        assert_eq!(c.access(b"ci-secret"), None);
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(digest_of_hex(&sha256_hex("x")).is_some() && digest_of_hex("abc").is_none());
    }
}
