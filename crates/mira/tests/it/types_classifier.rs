//! The learned type classifier through the public surface: `mira_store` without a type files
//! fresh statements (in neither labelled set) under the type a person would choose, old ones
//! of those types survive `mira archive`, and `mira eval types` prints its table; the shipped
//! weights are what training on the training sets gives.

use crate::common;
use crate::mcp_common::{self, StdioClient};
use mira::eval::types::{self, TypesOptions};
use mira_core::memory::MemoryType;
use mira_core::type_model::{self, Example, TypeModel};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Statements written for this test (not in `types-*.jsonl`), eight per type, in the words of
/// coding agents, team chats and personal notes, with the type a person would file them under.
const FRESH: &[(&str, &str)] = &[
    (
        "decision",
        "Going forward, every new service gets its own Terraform module.",
    ),
    (
        "decision",
        "Feature branches are squash-merged; no merge commits on main.",
    ),
    (
        "decision",
        "The mobile team settled the debate: React Native stays for another year.",
    ),
    (
        "decision",
        "Let's keep API responses under 200 ms at p95 as the bar for the redesign.",
    ),
    (
        "decision",
        "Tests that touch the network are tagged slow and skipped in pre-commit.",
    ),
    (
        "decision",
        "Priya will write the migration guide before the 3.0 release.",
    ),
    (
        "decision",
        "We're dropping Python 3.8 support in the next minor version.",
    ),
    (
        "decision",
        "All secrets go through Vault, never through environment files in the repo.",
    ),
    (
        "fact",
        "The billing service talks to Stripe through a thin wrapper in pkg/payments.",
    ),
    (
        "fact",
        "Our on-call rotation is handled in PagerDuty, one week per engineer.",
    ),
    ("fact", "Grandma's birthday is on the 14th of August."),
    (
        "fact",
        "The nightly backup job writes to an S3 bucket named acme-db-snapshots.",
    ),
    ("fact", "Lena is the product manager for the search team."),
    ("fact", "The office wifi password is printed on the fridge."),
    (
        "fact",
        "The frontend is built with Vite and served by nginx.",
    ),
    (
        "fact",
        "Mark lives in Rotterdam and works remotely on Fridays.",
    ),
    ("preference", "Tabs over spaces, every time."),
    (
        "preference",
        "I'd like answers short, with code first and explanations after.",
    ),
    (
        "preference",
        "Dark roast coffee, no sugar, is what keeps me going.",
    ),
    (
        "preference",
        "Honestly, I can't stand YAML anchors; spell things out instead.",
    ),
    (
        "preference",
        "Please don't suggest Java; Kotlin is much nicer to work with for me.",
    ),
    (
        "preference",
        "My go-to editor is Neovim with a minimal config.",
    ),
    (
        "preference",
        "I enjoy hiking in the Alps more than beach holidays.",
    ),
    (
        "preference",
        "Pytest feels far more pleasant to me than unittest.",
    ),
    (
        "session_note",
        "Spent the afternoon pairing with Sam on the onboarding flow; we got halfway.",
    ),
    (
        "session_note",
        "Quick sync with design today, mostly about icon sizes.",
    ),
    (
        "session_note",
        "Haha, that meeting could have been an email.",
    ),
    (
        "session_note",
        "Reviewed three pull requests this morning and left comments on the cache one.",
    ),
    (
        "session_note",
        "Talked through the Q3 roadmap with the team; nothing decided yet.",
    ),
    ("session_note", "Thanks, that explanation helped a lot!"),
    (
        "session_note",
        "Wrapped up the day by tidying the README and closing stale issues.",
    ),
    (
        "session_note",
        "We chatted about the conference trip and who might give a talk.",
    ),
    (
        "debug_log",
        "The login endpoint returns 500 when the email contains a plus sign.",
    ),
    (
        "debug_log",
        "Builds on CI hang at the cargo fetch step since this morning.",
    ),
    (
        "debug_log",
        "Turned out the cron job ran twice because of the daylight saving switch.",
    ),
    (
        "debug_log",
        "ImportError: cannot import name 'soft_unicode' from 'markupsafe'.",
    ),
    (
        "debug_log",
        "The dashboard shows stale numbers because the Redis TTL was never set.",
    ),
    (
        "debug_log",
        "Flaky test: test_upload_retry passes locally but times out on CI about one run in five.",
    ),
    (
        "debug_log",
        "Memory usage of the worker climbs to 4 GB and the pod gets OOM-killed after a few hours.",
    ),
    (
        "debug_log",
        "Pinning urllib3 below 2.0 made the SSL handshake errors go away.",
    ),
];

/// The workspace root (the labelled sets and the weights file are read from the source tree).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Stores every statement of [`FRESH`] without a type over MCP, dated years ago, and archives
/// by age with `mira archive --yes`. The held-out accuracy is 0.87 (`eval types`); on 40
/// statements of a new hand that is ~35 right, with a standard deviation of ~2.1, so at least
/// 32 right (80%) is asked (37 are), and at least as many as the rules alone get. Archiving by
/// age takes only session notes and debug logs, so every fact, preference and decision
/// survives: all that the classifier filed under those types, and at least 22 of the 24 a
/// person would (23 do; the held-out set files 4 of 99 lasting statements as ageing).
#[test]
fn stored_statements_get_their_type_and_the_lasting_ones_survive_archiving() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = StdioClient::spawn(dir.path(), &["serve"]);
    client.initialize();
    let mut stored = Vec::new();
    for (label, text) in FRESH {
        let r = client.call_tool(
            "mira_store",
            json!({"content": text, "wing": "project", "created_at": "2019-03-04T10:00:00Z"}),
        );
        let id = mcp_common::stored_id(&r);
        let given: MemoryType = r["structuredContent"]["memory_type"]
            .as_str()
            .unwrap_or_else(|| panic!("no memory_type: {r}"))
            .parse()
            .unwrap();
        let label: MemoryType = label.parse().unwrap();
        stored.push((label, given, id, *text));
    }
    client.close();

    let right = stored.iter().filter(|(l, g, ..)| l == g).count();
    let rules = FRESH
        .iter()
        .filter(|(l, t)| mira_core::classify::classify(t).as_str() == *l)
        .count();
    let wrong: Vec<String> = stored
        .iter()
        .filter(|(l, g, ..)| l != g)
        .map(|(l, g, _, t)| format!("{l} → {g}: {t}"))
        .collect();
    assert!(
        right >= 32 && right >= rules,
        "{right}/40 right (rules alone {rules}):\n{}",
        wrong.join("\n")
    );

    let store = dir.path().join("store");
    let done = common::stdout(common::mira(&store).args(["archive", "--yes"]));
    assert!(done.starts_with("Archiving complete:\n"), "{done}");
    let timeline = common::stdout(common::mira(&store).args([
        "timeline",
        "--wing",
        "project",
        "--include-superseded",
        "--limit",
        "1000",
    ]));
    let lasting = |t: MemoryType| !matches!(t, MemoryType::SessionNote | MemoryType::DebugLog);
    let kept = |id: &str| timeline.contains(&id[..8]);
    for (_, given, id, text) in &stored {
        assert_eq!(kept(id), lasting(*given), "{given}: {text}\n{timeline}");
    }
    let people_keep = stored.iter().filter(|(l, ..)| lasting(*l)).count();
    let survived = stored
        .iter()
        .filter(|(l, _, id, _)| lasting(*l) && kept(id))
        .count();
    assert_eq!(people_keep, 24);
    assert!(survived >= 22, "{survived}/24 survived:\n{timeline}");
}

#[test]
fn eval_types_prints_the_table_of_rules_and_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::stdout(
        common::mira(dir.path())
            .current_dir(root())
            .args(["eval", "types"]),
    );
    assert!(out.contains("types-heldout.jsonl (163 statements"), "{out}");
    assert!(out.contains("rules") && out.contains("classifier"), "{out}");
    for t in MemoryType::ALL {
        assert!(out.contains(&format!("\n{t:<14} ")), "{t}: {out}");
    }
    assert!(out.contains("\noverall "), "{out}");
    // Outside the source tree the default sets are missing: the error says what to give.
    let missing = common::mira(dir.path())
        .current_dir(dir.path())
        .args(["eval", "types"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("give the file"),
        "{missing:?}"
    );
}

/// The shipped weights on the held-out set: what they reached when trained on both training
/// sets (0.871 overall, no type below 0.765; issue 33's target is 0.85 and 0.75), far above
/// the rules alone (0.571), with fewer lasting statements filed under a type archiving takes; and
/// training again on the training sets with the shipped settings gives the same answers on it.
#[test]
fn the_shipped_weights_beat_the_rules_and_are_what_training_gives() {
    let model = common::model();
    let heldout = root().join(types::DEFAULT_HELDOUT);
    let opts = TypesOptions {
        heldout: heldout.clone(),
        train: None,
    };
    let (report, _) = types::run(&*model, &opts).unwrap();
    assert!(report.model.overall >= 0.87, "{:?}", report.model);
    assert!(report.model.worst_type >= 0.76, "{:?}", report.model);
    assert!(
        report.model.overall >= report.rules.overall + 0.2,
        "{report:?}"
    );
    assert!(
        report.model.lasting_filed_ageing < report.rules.lasting_filed_ageing,
        "{report:?}"
    );

    let shipped = type_model::shipped().unwrap();
    let train: Vec<Example> = types::DEFAULT_TRAIN
        .iter()
        .flat_map(|set| types::examples(&*model, &root().join(set)).unwrap())
        .map(|(e, _)| e)
        .collect();
    let again = TypeModel::train(&train, shipped.params, "", "");
    let held: Vec<Example> = types::examples(&*model, &heldout)
        .unwrap()
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    let differ = held
        .iter()
        .filter(|e| again.predict(&e.vector, e.rules) != shipped.predict(&e.vector, e.rules))
        .count();
    assert_eq!(differ, 0, "retrained weights answer differently");
}
