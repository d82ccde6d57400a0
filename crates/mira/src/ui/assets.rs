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

/// Every file of the page.
const ASSETS: &[Asset] = &[
    Asset {
        name: "index.html",
        content_type: "text/html; charset=utf-8",
        body: include_str!("assets/index.html"),
    },
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("assets/style.css"),
    },
    Asset {
        name: "main.js",
        content_type: JS,
        body: include_str!("assets/main.js"),
    },
    Asset {
        name: "api.js",
        content_type: JS,
        body: include_str!("assets/api.js"),
    },
    Asset {
        name: "dom.js",
        content_type: JS,
        body: include_str!("assets/dom.js"),
    },
    Asset {
        name: "views.js",
        content_type: JS,
        body: include_str!("assets/views.js"),
    },
    Asset {
        name: "memory.js",
        content_type: JS,
        body: include_str!("assets/memory.js"),
    },
    Asset {
        name: "charts.js",
        content_type: JS,
        body: include_str!("assets/charts.js"),
    },
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
