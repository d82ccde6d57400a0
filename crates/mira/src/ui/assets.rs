//! The page's files, embedded in the binary: served as they are, with their content type.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

/// An embedded file: its name under `/ui/`, content type and bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// The embedded file `assets/<name>`.
macro_rules! asset {
    ($name:literal, $content_type:expr) => {
        Asset {
            name: $name,
            content_type: $content_type,
            body: include_str!(concat!("assets/", $name)),
        }
    };
}

/// Every file of the page.
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("main.js", JS),
    asset!("api.js", JS),
    asset!("dom.js", JS),
    asset!("views.js", JS),
    asset!("memory.js", JS),
    asset!("charts.js", JS),
];

fn asset(name: &str) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(a) => ([(header::CONTENT_TYPE, a.content_type)], a.body).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "no such file: the memory browser is at /ui/\n",
        )
            .into_response(),
    }
}

/// `/ui` (redirected to `/ui/`), `/ui/` (the page) and `/ui/<file>`.
pub fn router() -> axum::Router {
    axum::Router::new()
        .route("/ui", get(|| async { Redirect::to(super::PATH) }))
        .route("/ui/", get(|| async { asset("index.html") }))
        .route(
            "/ui/{file}",
            get(|Path(file): Path<String>| async move { asset(&file) }),
        )
}
