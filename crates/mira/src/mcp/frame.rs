//! Checking one incoming JSON-RPC frame before the protocol sees it, so that malformed input
//! gets a JSON-RPC error (rmcp drops unparsable stdio input silently, and answers a malformed
//! HTTP body with a bare 415).

use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;

/// Longest accepted frame (4 MiB, rmcp's limit for an HTTP body).
pub const MAX_FRAME_BYTES: usize = 4 * 1024 * 1024;

/// What to do with one line.
#[derive(Debug)]
pub enum Parsed {
    /// Hand it to the protocol.
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing (blank line, or a notification mira does not know).
    Skip,
    /// Answer the client with this error frame.
    Answer(String),
}

/// Parses one line.
pub fn classify(raw: &[u8]) -> Parsed {
    let line = raw.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Skip;
    }
    let err = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => return Parsed::Message(Box::new(m)),
        Err(e) => e,
    };
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(v) => v,
        Err(e) => {
            return Parsed::Answer(error_frame(
                &Value::Null,
                -32700,
                format!("Parse error: {e}. Send one JSON-RPC 2.0 message per line."),
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
        "batches are not supported, send one message per line".to_owned()
    } else {
        err.to_string()
    };
    Parsed::Answer(error_frame(
        &id.unwrap_or(Value::Null),
        -32600,
        format!("Invalid request: {what}"),
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
        match classify(line.as_bytes()) {
            Parsed::Answer(a) => serde_json::from_str(&a).expect("error frames are JSON"),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn frames_are_classified() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert!(matches!(classify(init.as_bytes()), Parsed::Message(_)));
        assert!(matches!(
            classify(format!("\u{feff}{init}\r").as_bytes()),
            Parsed::Message(_)
        ));
        assert!(matches!(classify(b"   "), Parsed::Skip));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#),
            Parsed::Message(_)
        ));
        // A malformed notification is dropped: notifications are never answered.
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#),
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
}
