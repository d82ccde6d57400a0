//! Checking one incoming JSON-RPC frame before the protocol sees it, so that malformed input
//! gets a JSON-RPC error (rmcp drops unparsable stdio input silently, and answers a malformed
//! HTTP body with a bare 415), and a request for a feature mira does not offer gets "method not
//! found" without a warning in the log.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::Value;

/// Longest accepted frame (4 MiB, rmcp's limit for an HTTP body).
pub const MAX_FRAME_BYTES: usize = 4 * 1024 * 1024;

/// How frames arrive, for the advice of an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One message per line (stdio).
    Line,
    /// One message per HTTP request body (streamable HTTP).
    Body,
}

impl Framing {
    /// How to send a message the right way.
    fn advice(self) -> &'static str {
        match self {
            Framing::Line => "Send one JSON-RPC 2.0 message per line.",
            Framing::Body => {
                "POST one JSON-RPC 2.0 message as the request body (Content-Type: application/json)."
            }
        }
    }

    /// What to do instead of a batch.
    fn one_at_a_time(self) -> &'static str {
        match self {
            Framing::Line => "batches are not supported, send one message per line",
            Framing::Body => "batches are not supported, POST one message per request",
        }
    }
}

/// What to do with one frame.
#[derive(Debug)]
pub enum Parsed {
    /// Hand it to the protocol.
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing (blank line, or a notification mira does not know).
    Skip,
    /// The frame is malformed: answer the client with this error frame.
    Answer(String),
    /// A well-formed request for a feature mira does not offer: answer with this
    /// "method not found" frame.
    Unoffered(String),
}

/// Parses one frame.
pub fn classify(raw: &[u8], framing: Framing) -> Parsed {
    let line = raw.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Skip;
    }
    let err = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => return unoffered(&m).map_or(Parsed::Message(Box::new(m)), Parsed::Unoffered),
        Err(e) => e,
    };
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(v) => v,
        Err(e) => {
            return Parsed::Answer(error_frame(
                &Value::Null,
                -32700,
                format!("Parse error: {e}. {}", framing.advice()),
            ))
        }
    };
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned();
    let method = value.get("method").and_then(Value::as_str);
    if let (None, Some(m)) = (&id, method) {
        // A notification is never answered; unknown ones are ignored, as MCP clients expect.
        tracing::debug!("ignoring the notification {m}: {err}");
        return Parsed::Skip;
    }
    let what = if value.is_array() {
        framing.one_at_a_time().to_owned()
    } else {
        err.to_string()
    };
    Parsed::Answer(error_frame(
        &id.unwrap_or(Value::Null),
        -32600,
        format!("Invalid request: {what}"),
    ))
}

/// The "method not found" answer to a request for a feature mira does not declare: prompts,
/// resources, completion, log levels, or a method MCP does not define. Clients probe some of
/// these whatever the capabilities say (`prompts/list`, `resources/list`): that is logged at
/// debug level, while rmcp would log each error answer as a warning.
fn unoffered(message: &ClientJsonRpcMessage) -> Option<String> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let method = match &request.request {
        ClientRequest::CompleteRequest(_)
        | ClientRequest::SetLevelRequest(_)
        | ClientRequest::GetPromptRequest(_)
        | ClientRequest::ListPromptsRequest(_)
        | ClientRequest::ListResourcesRequest(_)
        | ClientRequest::ListResourceTemplatesRequest(_)
        | ClientRequest::ReadResourceRequest(_)
        | ClientRequest::SubscribeRequest(_)
        | ClientRequest::UnsubscribeRequest(_)
        | ClientRequest::CustomRequest(_) => request.request.method(),
        _ => return None,
    };
    tracing::debug!("{method}: not offered (mira serves tools only)");
    let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
    Some(error_frame(
        &id,
        -32601,
        format!("Method not found: {method}. mira offers tools only (tools/list, tools/call)."),
    ))
}

/// A JSON-RPC error response.
pub fn error_frame(id: &Value, code: i64, message: String) -> String {
    // Written by hand to keep the usual member order (`jsonrpc`, `id`, `error`).
    let message = Value::String(message);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match classify(line.as_bytes(), Framing::Line) {
            Parsed::Answer(a) => serde_json::from_str(&a).expect("error frames are JSON"),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn frames_are_classified() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert!(matches!(
            classify(init.as_bytes(), Framing::Line),
            Parsed::Message(_)
        ));
        assert!(matches!(
            classify(format!("\u{feff}{init}\r").as_bytes(), Framing::Line),
            Parsed::Message(_)
        ));
        assert!(matches!(classify(b"   ", Framing::Line), Parsed::Skip));
        assert!(matches!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#,
                Framing::Line
            ),
            Parsed::Message(_)
        ));
        // A malformed notification is dropped: notifications are never answered.
        assert!(matches!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#,
                Framing::Line
            ),
            Parsed::Skip
        ));

        assert!(
            error_frame(&Value::Null, -32700, "a \"b\"".into()).starts_with(
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"a \"b\""#
            )
        );
        let e = answer("{not json");
        assert_eq!(
            (e["error"]["code"].as_i64(), e["id"].is_null()),
            (Some(-32700), true)
        );
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(answer(&deep)["error"]["code"], -32700);
        let e = answer(r#"{"jsonrpc":"2.0","id":7,"params":3}"#);
        assert_eq!(
            (e["error"]["code"].as_i64(), e["id"].as_i64()),
            (Some(-32600), Some(7))
        );
        assert!(answer("[1,2]")["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("batches")));
    }

    #[test]
    fn http_bodies_get_http_advice() {
        let Parsed::Answer(a) = classify(b"{not json", Framing::Body) else {
            panic!("a parse error");
        };
        assert!(
            a.contains("as the request body") && !a.contains("per line"),
            "{a}"
        );
        let Parsed::Answer(a) = classify(b"[{}]", Framing::Body) else {
            panic!("a batch");
        };
        assert!(
            a.contains("one message per request") && !a.contains("line"),
            "{a}"
        );
    }

    #[test]
    fn requests_for_features_mira_does_not_offer_get_method_not_found() {
        for (method, id) in [
            ("prompts/list", "3"),
            ("resources/list", "\"r\""),
            ("resources/templates/list", "4"),
            ("completion/complete", "5"),
            ("logging/setLevel", "6"),
            ("no/such/method", "7"),
        ] {
            let frame =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#);
            let Parsed::Unoffered(a) = classify(frame.as_bytes(), Framing::Line) else {
                panic!("{method}: {:?}", classify(frame.as_bytes(), Framing::Line));
            };
            let a: Value = serde_json::from_str(&a).expect("JSON");
            assert_eq!(a["error"]["code"], -32601, "{a}");
            assert_eq!(a["id"].to_string(), id, "{a}");
            assert!(a["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(method)));
        }
        for served in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mira_status"}}"#,
        ] {
            assert!(
                matches!(
                    classify(served.as_bytes(), Framing::Body),
                    Parsed::Message(_)
                ),
                "{served}"
            );
        }
    }
}
