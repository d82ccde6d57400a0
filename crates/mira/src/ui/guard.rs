//! What every request to the browser goes through: the host check (no DNS rebinding on a
//! loopback address), the cross-site check of requests that change something, and the security
//! headers of every answer.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;

/// The page's own files, nothing else: no inline script or style, no other origin, no frames.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How the browser is served.
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    /// Listening on a loopback address: only loopback host names are answered.
    loopback: bool,
}

impl Guard {
    /// The guard of a server listening on `addr`.
    pub fn new(addr: SocketAddr) -> Guard {
        Guard {
            loopback: addr.ip().is_loopback(),
        }
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message }))).into_response()
}

/// The host name of a `Host` header (`localhost:8766` → `localhost`, `[::1]:80` → `[::1]`).
fn host_name(host: &str) -> &str {
    match host.rfind(':') {
        Some(i) if !host[i..].contains(']') => &host[..i],
        _ => host,
    }
}

fn is_loopback_name(host: &str) -> bool {
    let name = host_name(host).to_ascii_lowercase();
    name == "localhost"
        || name == "[::1]"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a request that changes something may come from a page of another site: it must
/// carry a JSON body (a cross-site form cannot send one without a CORS preflight, which is never
/// granted), and when its browser names the origin, that origin must be this server.
fn cross_site(headers: &HeaderMap) -> Option<&'static str> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"));
    if !json {
        return Some("a request that changes memories must send a JSON body (Content-Type: application/json)");
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    match (headers.get(header::ORIGIN).map(HeaderValue::to_str), host) {
        (None, _) => None,
        (Some(Ok(origin)), Some(host))
            if origin
                .split_once("://")
                .is_some_and(|(_, rest)| rest.eq_ignore_ascii_case(host)) =>
        {
            None
        }
        _ => Some("cross-site request refused: use the memory browser's own page"),
    }
}

/// Checks a request and adds the security headers to its answer.
pub async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if guard.loopback {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        if !host.is_some_and(is_loopback_name) {
            return refuse(
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers on a loopback address only: open it as http://127.0.0.1:<port>/ui/ or http://localhost:<port>/ui/",
            );
        }
    }
    let changes = !matches!(*request.method(), Method::GET | Method::HEAD);
    if changes && request.uri().path().starts_with("/ui/api/") {
        if let Some(why) = cross_site(headers) {
            return refuse(StatusCode::FORBIDDEN, why);
        }
    }
    let api = request.uri().path().starts_with("/ui/api/");
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if api {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_host_names() {
        for ok in [
            "localhost:8766",
            "127.0.0.1:1",
            "127.0.0.1",
            "[::1]:8766",
            "LOCALHOST",
        ] {
            assert!(is_loopback_name(ok), "{ok}");
        }
        for bad in [
            "evil.example:8766",
            "10.0.0.1:80",
            "localhost.evil.example",
            "",
        ] {
            assert!(!is_loopback_name(bad), "{bad}");
        }
    }

    #[test]
    fn cross_site_requests() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8766"));
        assert!(cross_site(&h).is_some(), "no JSON body");
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        assert_eq!(cross_site(&h), None);
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8766"),
        );
        assert_eq!(cross_site(&h), None);
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert!(cross_site(&h).is_some());
        h.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(cross_site(&h).is_some());
    }
}
