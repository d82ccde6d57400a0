//! Batch stores (`store_batch`, as `mira import --format locomo` and `mira eval` ingest) relate
//! each memory to the earlier ones of the same batch exactly as the same stores one by one do:
//! causal links, near duplicates, supersession by slot or cue, retraction, exact duplicates,
//! whatever the batch size, the forward-pass size or the window boundaries.

use crate::common::{self, SEED};
use mira::usecases::access::Access;
use mira::usecases::store::{store, store_batch, StoreOutcome, StoreRequest};
use mira::App;
use mira_core::MemoryId;
use std::collections::HashMap;
use std::sync::Arc;

/// A conversation whose turns refer to each other.
const TURNS: &[&str] = &[
    SEED,
    "The office coffee machine is broken again.",
    "I live in Paris.",
    "The marketing budget is $5000 for the spring campaign.",
    "We reverted the PostgreSQL migration because of replication lag in production.",
    "The API listens on port 8080.",
    "I moved to Berlin last month.",
    "The API listens on port 8080!",
    "We use Jenkins for CI.",
    "The office coffee machine is broken again.",
    "We use GitHub Actions for CI.",
    "Please disregard what I said about the marketing budget.",
    "The weekly meeting is on Tuesday.",
    "Actually the weekly meeting is on Thursday.",
];

fn requests(turns: &[String], wing: &str) -> Vec<StoreRequest> {
    let start = chrono::DateTime::parse_from_rfc3339("2024-05-01T09:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    turns
        .iter()
        .enumerate()
        .map(|(i, t)| StoreRequest {
            content: t.clone(),
            wing: wing.into(),
            created_at: Some(start + chrono::Duration::minutes(i as i64)),
            session_id: Some("s1".into()),
            ..StoreRequest::default()
        })
        .collect()
}

/// An outcome with ids replaced by the index of the request that stored them, so that two
/// stores of the same requests compare equal.
#[derive(Debug, PartialEq)]
struct Shape {
    stored: bool,
    same_as: Option<usize>,
    near_duplicate_of: Option<usize>,
    links: Vec<(usize, String)>,
    superseded: Vec<usize>,
    retracted: Vec<usize>,
}

fn shapes(outcomes: &[StoreOutcome]) -> Vec<Shape> {
    let mut index: HashMap<MemoryId, usize> = HashMap::new();
    for (i, o) in outcomes.iter().enumerate() {
        index.entry(o.id).or_insert(i);
    }
    let at = |id: &MemoryId| index[id];
    outcomes
        .iter()
        .map(|o| {
            let mut links: Vec<(usize, String)> = o
                .links
                .iter()
                .map(|l| (at(&l.target), l.relation.to_string()))
                .collect();
            links.sort();
            let sorted = |ids: &[MemoryId]| {
                let mut v: Vec<usize> = ids.iter().map(at).collect();
                v.sort();
                v
            };
            Shape {
                stored: o.stored,
                same_as: (!o.stored).then(|| at(&o.id)),
                near_duplicate_of: o.near_duplicate_of.as_ref().map(at),
                links,
                superseded: sorted(&o.superseded),
                retracted: sorted(&o.retracted),
            }
        })
        .collect()
}

/// Asserts equal shapes, naming the first request that differs.
fn assert_same(got: &[Shape], expected: &[Shape], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
        panic!(
            "{what}: request {i} differs\n batch:  {:?}\n single: {:?}",
            got[i], expected[i]
        );
    }
}

fn one_by_one(app: &App, reqs: Vec<StoreRequest>) -> Vec<StoreOutcome> {
    reqs.into_iter()
        .map(|r| store(app, &Access::local(), r).unwrap())
        .collect()
}

fn batched(app: &App, reqs: Vec<StoreRequest>) -> Vec<StoreOutcome> {
    store_batch(app, reqs)
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

fn app_with(dir: &std::path::Path, embedder: Arc<dyn mira_embed::Embedder>, batch: usize) -> App {
    let mut cfg = common::config_in(dir);
    cfg.embeddings.batch_size = batch;
    App::open_with_embedder(cfg, embedder).unwrap()
}

#[test]
fn a_batch_relates_its_turns_like_single_stores() {
    let turns: Vec<String> = TURNS.iter().map(|t| t.to_string()).collect();
    let dir = tempfile::tempdir().unwrap();
    let single = app_with(&dir.path().join("single"), common::model(), 32);
    let expected = shapes(&one_by_one(&single, requests(&turns, "conv")));

    // The batch sees its own earlier turns: the follow-up links to the decision, the moves and
    // tool changes supersede, the retraction names the budget, copies are found.
    let linked = |i: usize, to: usize| expected[i].links.iter().any(|l| l.0 == to);
    assert!(linked(4, 0), "{:?}", expected[4]);
    assert_eq!(expected[6].superseded, vec![2]);
    assert_eq!(expected[10].superseded, vec![8]);
    assert_eq!(expected[11].retracted, vec![3]);
    assert_eq!(expected[7].near_duplicate_of, Some(5));
    assert_eq!(expected[9].same_as, Some(1));

    for batch in [1, 3, 32] {
        let b = app_with(
            &dir.path().join(format!("batch{batch}")),
            common::model(),
            batch,
        );
        let got = shapes(&batched(&b, requests(&turns, "conv")));
        assert_same(&got, &expected, &format!("forward passes of {batch}"));
        assert_eq!(
            b.store.stats().unwrap().memories,
            single.store.stats().unwrap().memories
        );
    }
}

#[test]
fn windows_do_not_change_the_outcome() {
    // More turns than one window holds, repeating facts that update each other, so that
    // relations cross the window boundaries (hash embedder: fast, same words = same vector).
    let facts = [
        "The cache TTL is {} seconds.",
        "The retry count is {}.",
        "The API rate limit is {} requests per minute.",
        "We reverted the change because the cache TTL of {} seconds was too short.",
    ];
    let turns: Vec<String> = (0..600)
        .map(|i| facts[i % facts.len()].replace("{}", &(100 + i / 7).to_string()))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let hash: Arc<dyn mira_embed::Embedder> = Arc::new(mira_embed::HashEmbedder::new(384));
    let single = app_with(&dir.path().join("single"), hash.clone(), 32);
    let expected = shapes(&one_by_one(&single, requests(&turns, "w")));
    assert!(expected.iter().filter(|s| !s.superseded.is_empty()).count() > 100);
    assert!(expected.iter().filter(|s| !s.stored).count() > 100);
    let b = app_with(&dir.path().join("batch"), hash, 32);
    assert_same(
        &shapes(&batched(&b, requests(&turns, "w"))),
        &expected,
        "600 turns",
    );
}
