//! Every tool declares an `outputSchema`, and what it really returns as
//! structured content validates against it: the real binary with SOUL on, every tool called in
//! the forms that answer differently (a duplicate, links and supersession, an empty wing, pages,
//! dry runs and restores, drift between models …). Clients of MCP 2025-06-18 (the official SDKs,
//! Claude Code) reject a result whose structured content does not match the tool's schema.

use crate::mcp_common::{self, is_error, stored_id, StdioClient};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The `outputSchema` of every listed tool, compiled (JSON Schema 2020-12, MCP's dialect).
struct OutputSchemas {
    schemas: boon::Schemas,
    by_tool: BTreeMap<String, boon::SchemaIndex>,
}

impl OutputSchemas {
    fn of(client: &mut StdioClient) -> OutputSchemas {
        let listed = client.request("tools/list", json!({}));
        let (mut schemas, mut compiler) = (boon::Schemas::new(), boon::Compiler::new());
        compiler.set_default_draft(boon::Draft::V2020_12);
        let mut by_tool = BTreeMap::new();
        for tool in listed["result"]["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap().to_owned();
            let schema = &tool["outputSchema"];
            assert_eq!(schema["type"], "object", "{name}: {schema}");
            let url = format!("https://mira.invalid/{name}.json");
            compiler.add_resource(&url, schema.clone()).unwrap();
            let index = compiler
                .compile(&url, &mut schemas)
                .unwrap_or_else(|e| panic!("{name}'s outputSchema is not a schema: {e:#}"));
            by_tool.insert(name, index);
        }
        OutputSchemas { schemas, by_tool }
    }

    /// Why `content` does not match `tool`'s schema, if it does not.
    fn check(&self, tool: &str, content: &Value) -> Result<(), String> {
        self.schemas
            .validate(content, self.by_tool[tool])
            .map_err(|e| format!("{e:#}"))
    }
}

/// The conversation of a capture: the agent's turns after `Assistant:`.
const CONVERSATION: &str = "User: Could you review the schema?
Assistant: Certainly. I would recommend that we analyze the schema systematically. Furthermore, the index is not appropriate for the reporting query. Therefore, I would suggest a composite index. Please note that the migration must be verified on a copy of the data.
User: And the cache?
Assistant: Regarding the cache, I would advise caution. Consequently, the invalidation strategy should be documented. Moreover, the configuration ought to be reviewed.";

/// The calls, in order (later ones use ids stored by earlier ones: `{first}`, `{second}`).
fn calls(first: &str, second: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("mira_status", json!({})),
        (
            "mira_recall",
            json!({"query": "database", "wing": "schema"}),
        ),
        (
            "mira_recall",
            json!({"query": "database", "wing": "nothing-here"}),
        ),
        (
            "mira_recall",
            json!({"query": "which database and why?", "wing": "schema", "budget": 60}),
        ),
        (
            "mira_recall",
            json!({"query": "pool", "order": "time", "fallback_wings": "other"}),
        ),
        ("mira_load", json!({"id": first})),
        ("mira_load", json!({"id": second})),
        ("mira_timeline", json!({"wing": "schema", "limit": 1})),
        (
            "mira_timeline",
            json!({"include_archived": true, "include_superseded": true, "order": "oldest"}),
        ),
        (
            "mira_causal_chain",
            json!({"id": second, "include_consequences": true}),
        ),
        ("mira_causal_chain", json!({"id": first})),
        ("mira_archive", json!({"dry_run": true})),
        ("mira_archive", json!({"ids": [first]})),
        ("mira_archive", json!({"restore": [first]})),
        (
            "mira_archive",
            json!({"older_than_days": 1, "dry_run": true}),
        ),
        (
            "soul_capture",
            json!({"agent_id": "ada", "conversation": CONVERSATION, "model_id": "model-a"}),
        ),
        (
            "soul_capture",
            json!({"agent_id": "ada", "conversation": CONVERSATION, "model_id": "model-b"}),
        ),
        (
            "soul_recall",
            json!({"agent_id": "ada", "budget": 200, "context": "schema review"}),
        ),
        ("soul_drift", json!({"agent_id": "ada"})),
        (
            "soul_drift",
            json!({"agent_id": "ada", "from_model": "model-a", "to_model": "model-b"}),
        ),
        (
            "soul_swap",
            json!({"agent_id": "ada", "from_model": "model-b", "to_model": "model-c"}),
        ),
        ("soul_status", json!({"agent_id": "ada"})),
        ("soul_status", json!({"agent_id": "nobody-yet"})),
        ("soul_history", json!({"agent_id": "ada", "limit": 3})),
        (
            "soul_update",
            json!({"agent_id": "ada", "directive": "be more concise", "reason": "user asked"}),
        ),
        (
            "soul_patch",
            json!({"agent_id": "ada", "formality_level": 0.8, "add_catch_phrases": ["Indeed."]}),
        ),
        (
            "mira_link",
            json!({"from": first, "to": second, "relation": "resolves"}),
        ),
        (
            "mira_unlink",
            json!({"from": first, "to": second, "relation": "resolves"}),
        ),
        (
            "mira_supersede",
            json!({"old": first, "new": second, "reason": "the pool decision replaces it"}),
        ),
        (
            "mira_supersede",
            json!({"old": first, "new": second, "undo": true}),
        ),
        ("mira_forget", json!({"id": second})),
        (
            "mira_clear_memory",
            json!({"mode": "wing", "wing": "other", "confirm": true}),
        ),
        (
            "mira_clear_memory",
            json!({"mode": "global", "confirm": true}),
        ),
        ("mira_status", json!({})),
    ]
}

#[test]
fn every_tool_declares_an_output_schema_its_results_match() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().unwrap();
    let mut client = StdioClient::spawn(dir.path(), &["serve", "--with-soul"]);
    client.initialize();
    let schemas = OutputSchemas::of(&mut client);
    assert!(schemas.by_tool.len() >= 19, "{:?}", schemas.by_tool.keys());

    let mut store = |content: &str, wing: &str| {
        let r = client.call_tool("mira_store", json!({"content": content, "wing": wing}));
        assert!(!is_error(&r), "{r}");
        r
    };
    let first = store("We decided to use PostgreSQL for the main database because we need ACID transactions. Rejected: MySQL.", "schema");
    let second = store(
        "Because we chose PostgreSQL, the connection pool is now set to 100 connections.",
        "schema",
    );
    let mut results = vec![
        ("mira_store", first.clone()),
        ("mira_store", second.clone()),
        ("mira_store", store("We decided to use PostgreSQL for the main database because we need ACID transactions. Rejected: MySQL.", "schema")),
        ("mira_store", store("Update: the connection pool is now set to 200 connections.", "schema")),
        ("mira_store", store("The pool of the reporting service is 20.", "other")),
    ];
    let (first, second) = (stored_id(&first), stored_id(&second));
    for (name, args) in calls(&first, &second) {
        results.push((name, client.call_tool(name, args)));
    }

    let mut validated: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, result) in &results {
        if is_error(result) {
            continue;
        }
        let content = result
            .get("structuredContent")
            .unwrap_or_else(|| panic!("{name} answered without structured content: {result}"));
        if let Err(why) = schemas.check(name, content) {
            panic!("{name}: {why}\nstructured content: {content:#}");
        }
        *validated.entry(name).or_default() += 1;
    }
    let untested: Vec<&String> = schemas
        .by_tool
        .keys()
        .filter(|n| !validated.contains_key(n.as_str()))
        .collect();
    assert!(
        untested.is_empty(),
        "no successful call validated {untested:?}: add one to calls()"
    );
    assert!(client.close().0.success());
}

/// A schema that does not describe the output is caught: the validator refuses a result with a
/// field of the wrong type or a missing required field (so the test above can fail).
#[test]
fn a_result_that_does_not_match_its_schema_is_refused() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().unwrap();
    let mut client = StdioClient::spawn(dir.path(), &["serve"]);
    client.initialize();
    let schemas = OutputSchemas::of(&mut client);
    let r = client.call_tool(
        "mira_store",
        json!({"content": "The staging cluster runs on port 8443.", "wing": "ops"}),
    );
    let mut content = r["structuredContent"].clone();
    assert_eq!(schemas.check("mira_store", &content), Ok(()));
    content["tokens"] = json!("many");
    assert!(schemas.check("mira_store", &content).is_err());
    content.as_object_mut().unwrap().remove("tokens");
    assert!(schemas.check("mira_store", &content).is_err());
    content["tokens"] = json!(3);
    content["memory_type"] = json!("poem");
    assert!(schemas.check("mira_store", &content).is_err(), "an enum");
    assert!(client.close().0.success());
}
