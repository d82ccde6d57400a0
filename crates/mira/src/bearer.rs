//! Optional bearer-token protection of an HTTP router (the MCP transport, the metrics server):
//! `Authorization: Bearer <token>` compared in constant time, 401 otherwise.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

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
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            format!("missing or wrong bearer token ({})\n", expected.setting),
        )
            .into_response()
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_comparison() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"Bearer abc"));
    }
}
