//! One line of MCP over stdio: any bytes are a message, skipped, or answered with a JSON-RPC
//! error frame that is itself valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira::mcp::frame::{classify, Parsed};

fuzz_target!(|data: &[u8]| {
    if let Parsed::Answer(a) = classify(data) {
        let v: serde_json::Value = serde_json::from_str(&a).expect("error frames are JSON");
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(v["error"]["code"].is_i64());
    }
});
