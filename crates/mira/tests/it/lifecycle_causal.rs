//! The causal chain use case: a decision, what it triggered and a fix that resolves them,
//! chained with the real model; depth bound, cycles, id forms.

use crate::common::{app, edge, hash_app, put};
use chrono::{Duration, TimeZone, Utc};
use mira::usecases::access::Access;
use mira::usecases::causal::{causal_chain, render_text, CausalRequest};
use mira::usecases::load::load;
use mira::usecases::store::{store, StoreRequest};
use mira::usecases::UseCaseError;
use mira::App;
use mira_core::memory::MemoryId;
use mira_core::render::short_id;
use mira_core::RelationType;

fn chain(
    app: &App,
    id: MemoryId,
    depth: Option<i64>,
    consequences: bool,
) -> mira::usecases::causal::CausalChain {
    causal_chain(
        app,
        &Access::local(),
        &CausalRequest {
            id: format!("T0:{id}"),
            max_depth: depth,
            include_consequences: consequences,
        },
    )
    .unwrap()
}

#[test]
fn a_follow_up_chain_is_linked_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let a = put(
        &app,
        "We decided to use PostgreSQL for the main database.",
        "db",
    );
    let b = put(
        &app,
        "Following the PostgreSQL decision, we chose pgAdmin for monitoring.",
        "db",
    );
    let of_b = chain(&app, b, None, false);
    assert_eq!(of_b.max_depth, 3);
    assert_eq!(of_b.causes.len(), 1, "{of_b:?}");
    let step = &of_b.causes[0];
    assert_eq!((step.node.id, step.depth, step.via), (a, 1, b));
    assert_eq!(step.relation, RelationType::Triggered);
    assert!(step.confidence > 0.0 && step.confidence <= 1.0);
    assert!(of_b.consequences.is_none());
    let text = render_text(&of_b);
    assert!(
        text.starts_with(&format!(
            "=== CAUSAL CHAIN (Upstream) ===\nStart: {} [",
            short_id(b)
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("\n→ {} [decision] ", short_id(a))),
        "{text}"
    );
    let date = Utc::now().format("%Y-%m-%d");
    let expected = format!(
        "\n→ {} [decision] PostgreSQL: main database ({date}) — triggered {:.2}\n",
        short_id(a),
        step.confidence
    );
    assert!(text.contains(&expected), "{text}\nexpected {expected}");
    assert!(!text.contains("CONSEQUENCES"), "{text}");

    let of_a = chain(&app, a, None, true);
    assert!(of_a.causes.is_empty());
    let cons = of_a.consequences.as_ref().unwrap();
    assert_eq!(cons.iter().map(|s| s.node.id).collect::<Vec<_>>(), vec![b]);
    assert_eq!(cons[0].relation, RelationType::Triggered);
    let text = render_text(&of_a);
    assert!(
        text.contains(&format!(
            "(no causes recorded)\n\n=== CONSEQUENCES (Downstream) ===\n→ {} [",
            short_id(b)
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("— triggered {:.2}", cons[0].confidence)),
        "{text}"
    );

    // Whatever links C got at store time, its chain lists exactly those memories.
    let c = put(
        &app,
        "This fix resolves the timeout issue because the pool was too small.",
        "db",
    );
    let stored: Vec<MemoryId> = load(&app, &Access::local(), &c.to_string())
        .unwrap()
        .causes
        .iter()
        .map(|e| e.other)
        .collect();
    let of_c = chain(&app, c, Some(1), false);
    let mut listed: Vec<MemoryId> = of_c.causes.iter().map(|s| s.node.id).collect();
    let mut expected = stored.clone();
    listed.sort();
    expected.sort();
    expected.dedup();
    assert_eq!(listed, expected);
}

/// Five memories m0 → m1 → m2 → m3 → m4 (each caused by the previous one).
fn line(app: &App) -> Vec<MemoryId> {
    let t0 = Utc.with_ymd_and_hms(2024, 5, 1, 9, 0, 0).unwrap();
    let ids: Vec<MemoryId> = (0..5)
        .map(|i| {
            store(
                app,
                &Access::local(),
                StoreRequest {
                    content: format!("Step {i} of the rollout plan for the billing service."),
                    wing: "w".into(),
                    memory_type: Some("fact".into()),
                    created_at: Some(t0 + Duration::hours(i)),
                    ..StoreRequest::default()
                },
            )
            .unwrap()
            .id
        })
        .collect();
    for w in ids.windows(2) {
        edge(app, w[0], w[1]);
    }
    ids
}

#[test]
fn depth_is_bounded_and_validated() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let m = line(&app);
    let depth_of = |c: &mira::usecases::causal::CausalChain| {
        c.causes
            .iter()
            .map(|s| (s.node.id, s.depth))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        depth_of(&chain(&app, m[4], Some(2), false)),
        vec![(m[3], 1), (m[2], 2)]
    );
    assert_eq!(
        depth_of(&chain(&app, m[4], None, false)),
        vec![(m[3], 1), (m[2], 2), (m[1], 3)]
    );
    assert_eq!(depth_of(&chain(&app, m[4], Some(10), false)).len(), 4);
    let text = render_text(&chain(&app, m[4], Some(3), false));
    assert!(
        text.contains(&format!("\n→ {} [fact] ", short_id(m[3])))
            && text.contains(&format!("\n  → {} [fact] ", short_id(m[2]))),
        "{text}"
    );
    assert!(
        text.contains(&format!("\n    → {} [fact] ", short_id(m[1])))
            && text.contains("— because 0.50"),
        "{text}"
    );
    let down = chain(&app, m[0], Some(2), true);
    assert!(down.causes.is_empty());
    assert_eq!(
        down.consequences
            .unwrap()
            .iter()
            .map(|s| s.node.id)
            .collect::<Vec<_>>(),
        vec![m[1], m[2]]
    );
    for bad in [0, -1, 11, i64::MAX] {
        match causal_chain(
            &app,
            &Access::local(),
            &CausalRequest {
                id: m[0].to_string(),
                max_depth: Some(bad),
                ..CausalRequest::default()
            },
        ) {
            Err(UseCaseError::Invalid(msg)) => assert!(msg.contains("1 to 10"), "{msg}"),
            other => panic!("max_depth {bad}: {other:?}"),
        }
    }
}

#[test]
fn cycles_terminate_and_the_start_is_never_its_own_cause() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let m = line(&app);
    edge(&app, m[4], m[0]); // closes the cycle m0 → … → m4 → m0
    edge(&app, m[2], m[4]); // and a second path to m4's cause set
    let c = chain(&app, m[4], Some(10), true);
    let causes: Vec<MemoryId> = c.causes.iter().map(|s| s.node.id).collect();
    assert!(!causes.contains(&m[4]), "{causes:?}");
    let mut sorted = causes.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 4, "each memory once: {causes:?}");
    // m2 is a direct cause (depth 1) as well as a cause of m3: listed once, at depth 1.
    assert!(c.causes.iter().any(|s| s.node.id == m[2] && s.depth == 1));
    let cons: Vec<MemoryId> = c
        .consequences
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| s.node.id)
        .collect();
    assert_eq!(cons.len(), 4);
    assert!(!cons.contains(&m[4]));
    // A self-loop terminates too.
    edge(&app, m[1], m[1]);
    assert!(chain(&app, m[1], Some(10), false)
        .causes
        .iter()
        .all(|s| s.node.id != m[1]));
}

#[test]
fn ids_in_any_printed_form_and_unknown_ids() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let m = line(&app);
    for form in [
        m[1].to_string(),
        format!("T0:{}", m[1]),
        format!(" ID: t0:{} ", m[1]),
    ] {
        let c = causal_chain(
            &app,
            &Access::local(),
            &CausalRequest {
                id: form.clone(),
                ..CausalRequest::default()
            },
        )
        .unwrap();
        assert_eq!(c.start.id, m[1], "{form}");
        assert_eq!(c.causes.len(), 1);
    }
    match causal_chain(
        &app,
        &Access::local(),
        &CausalRequest {
            id: format!("T0:{}", uuid::Uuid::new_v4()),
            ..CausalRequest::default()
        },
    ) {
        Err(UseCaseError::NotFound(msg)) => assert!(
            msg.contains("mira_recall") && msg.contains("mira_timeline"),
            "{msg}"
        ),
        other => panic!("{other:?}"),
    }
    match causal_chain(
        &app,
        &Access::local(),
        &CausalRequest {
            id: "T0:abc".into(),
            ..CausalRequest::default()
        },
    ) {
        Err(UseCaseError::Invalid(msg)) => assert!(msg.contains("mira_recall"), "{msg}"),
        other => panic!("{other:?}"),
    }
    let json = serde_json::to_value(chain(&app, m[1], None, true)).unwrap();
    assert_eq!(json["causes"][0]["relation"], "because");
    assert_eq!(json["causes"][0]["node"]["id"], m[0].to_string());
    assert_eq!(json["consequences"][0]["depth"], 1);
}
