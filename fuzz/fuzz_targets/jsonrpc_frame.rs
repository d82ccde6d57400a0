//! One frame of MCP (a stdio line or an HTTP body): any bytes are a message, skipped, or
//! answered with a JSON-RPC error frame that is itself valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira::mcp::frame::{classify, Framing, Parsed};

fuzz_target!(|data: &[u8]| {
    for framing in [Framing::Line, Framing::Body] {
        if let Parsed::Answer(a) | Parsed::Unoffered(a) = classify(data, framing) {
            let v: serde_json::Value = serde_json::from_str(&a).expect("error frames are JSON");
            assert_eq!(v["jsonrpc"], "2.0");
            assert!(v["error"]["code"].is_i64());
        }
    }
});
