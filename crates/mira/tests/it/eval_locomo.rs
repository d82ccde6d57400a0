//! `mira eval locomo` on development conversations (a bounded number of questions).

use crate::common::locomo_dev_dir as locomo_dir;
use std::sync::Arc;

#[test]
fn eval_reports_every_system_and_category() {
    let dir = locomo_dir();
    let conv = mira::locomo::parse_conversation(&dir.join("30.json")).unwrap();
    assert!(conv.turns.len() > 300, "{}", conv.turns.len());
    assert!(conv.turns.windows(2).all(|w| w[0].at <= w[1].at));
    let model = mira_embed::MiniLm::load(&mira_embed::resolve_model_dir(None)).unwrap();
    let questions = tempfile::NamedTempFile::new().unwrap();
    let opts = mira::eval::EvalOptions {
        paths: vec![dir.join("30.json")],
        budget: 2000,
        max_questions: Some(40),
        k: None,
        loco: false,
        questions: Some(questions.path().to_path_buf()),
        text_ranks: false,
    };
    let report = mira::eval::run(&mira::Config::default(), Arc::new(model), &opts).unwrap();
    assert_eq!(report.datasets.len(), 1);
    let d = &report.datasets[0];
    assert_eq!(d.name, "30");
    assert_eq!(d.conversations.len(), 1);
    assert_eq!(d.conversations[0].id, "30");
    assert_eq!(d.turns, conv.turns.len());
    assert!(d.questions >= 30);
    assert!(d.seconds > 0.0 && d.seconds <= report.seconds);
    for name in ["mira", "bm25", "dense", "rrf", "fts"] {
        let s = &d.systems[name];
        let m = &s.overall;
        for v in [
            m.recall_at_5,
            m.recall_at_10,
            m.session_recall_at_10,
            m.session_any_at_5,
            m.session_any_at_10,
            m.budget_recall,
        ] {
            assert!((0.0..=1.0).contains(&v), "{name}: {v}");
        }
        assert!(m.recall_at_5 <= m.recall_at_10 + 1e-9);
        assert!(m.session_any_at_5 <= m.session_any_at_10 + 1e-9);
        // Evidence among the first ten memories puts its session among the first ten sessions.
        assert!(
            m.session_any_at_10 + 1e-9 >= m.recall_at_10,
            "{name}: {m:?}"
        );
        assert!(m.mean_tokens > 0.0 && m.mean_tokens <= 2000.0);
        assert!(m.p50_ms <= m.p95_ms);
    }
    // The retrievers find evidence far above chance (a random top 10 of ~370 turns finds ~3%),
    // and an evidence session among the first five sessions for most questions.
    let mira = &d.systems["mira"].overall;
    assert!(mira.recall_at_10 > 0.2, "{mira:?}");
    assert!(mira.session_any_at_5 > 0.5, "{mira:?}");
    // One conversation: no other conversation's questions to ask.
    assert_eq!(d.foreign_questions, 0);
    assert!(!d.systems["mira"].by_category.contains_key("other"));
    let json = serde_json::to_value(&report).unwrap();
    let js = &json["datasets"][0];
    assert!(js["systems"]["mira"]["by_category"]["1"]["recall@10"].is_number());
    assert!(js["systems"]["rrf"]["overall"]["session_recall_any@5"].is_number());
    assert!(js["conversations"][0]["systems"]["mira"]["recall@10"].is_number());
    assert!(js["questions"].is_number() && js["seconds"].is_number());
    assert!(json["seconds"].is_number());
    let table = mira::eval::render_table(&report, true);
    assert!(table.contains("Per conversation"), "{table}");
    assert!(
        table.contains("any@5") && table.contains("any@10"),
        "{table}"
    );
    // The questions file: one line per question asked, each system's best as (turn, relevance).
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(questions.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), d.questions + d.foreign_questions);
    let turn_ids: std::collections::HashSet<&str> =
        conv.turns.iter().map(|t| t.dia_id.as_str()).collect();
    for l in lines.iter().filter(|l| l["category"] != 0) {
        assert_eq!(l["conversation"], "30");
        let top = l["ranked"]["mira"].as_array().unwrap();
        assert!(!top.is_empty(), "{l}");
        for pair in top {
            assert!(turn_ids.contains(pair[0].as_str().unwrap()), "{l}");
            assert!((0.0..=1.0).contains(&pair[1].as_f64().unwrap()), "{l}");
        }
    }
}

/// `--text-ranks` on PostgreSQL: each of its full-text rankings is a system of the report,
/// compared with BM25's top 10; on SQLite the option is refused, saying what it needs.
#[test]
fn eval_compares_postgres_text_rankings_with_bm25() {
    let opts = mira::eval::EvalOptions {
        paths: vec![locomo_dir().join("30.json")],
        budget: 2000,
        max_questions: Some(12),
        k: None,
        loco: false,
        questions: None,
        text_ranks: true,
    };
    let refused = mira::eval::run(&mira::Config::default(), crate::common::model(), &opts)
        .err()
        .unwrap();
    assert!(
        refused.to_string().contains("storage.backend: postgres"),
        "{refused}"
    );
    let Some(db) = crate::common::Db::postgres() else {
        return;
    };
    let report = mira::eval::run(&db.config(), crate::common::model(), &opts).unwrap();
    let report = &report.datasets[0];
    assert_eq!(
        report.systems["bm25"].overall.bm25_overlap_at_10, 1.0,
        "BM25 against itself"
    );
    for rank in mira_store::TextRank::ALL {
        let m = &report.systems[&format!("fts:{}", rank.name())].overall;
        assert!(m.questions > 0, "{}", rank.name());
        assert!((0.0..=1.0).contains(&m.bm25_overlap_at_10), "{m:?}");
        assert!((0.0..=1.0).contains(&m.recall_at_10), "{m:?}");
    }
    // The store's own search ranks by its default ranking: the same lists.
    let default = &report.systems[&format!("fts:{}", mira_store::TextRank::DEFAULT.name())];
    assert_eq!(
        report.systems["fts"].overall.recall_at_10,
        default.overall.recall_at_10
    );
    // Words in common with the question find evidence far above chance.
    assert!(
        report.systems["fts"].overall.recall_at_10 > 0.1,
        "{report:?}"
    );
}

/// Two data sets in one run: a table each, and with `--loco` the ranking chosen on one data set
/// scored on the other, and every stage switched off.
#[test]
fn eval_scores_several_data_sets_and_leaves_each_out() {
    let dir = locomo_dir();
    // A data set of two conversations, and one of a single conversation.
    let tmp = tempfile::tempdir().unwrap();
    let pair = tmp.path().join("pair");
    std::fs::create_dir(&pair).unwrap();
    for f in ["30.json", "26.json"] {
        std::fs::copy(dir.join(f), pair.join(f)).unwrap();
    }
    let opts = mira::eval::EvalOptions {
        paths: vec![pair, dir.join("26.json")],
        budget: 2000,
        max_questions: Some(8),
        k: None,
        loco: true,
        questions: None,
        text_ranks: false,
    };
    let report = mira::eval::run(&mira::Config::default(), crate::common::model(), &opts).unwrap();
    let names: Vec<&str> = report.datasets.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["pair", "26"]);
    let pair = &report.datasets[0];
    assert_eq!(pair.conversations.len(), 2);
    // Each conversation is also asked questions of the other, which nothing in it answers:
    // they count apart, for tokens only.
    assert!(pair.foreign_questions > 0);
    let other = &pair.systems["mira"].by_category["other"];
    assert_eq!(other.questions, pair.foreign_questions);
    assert_eq!(other.recall_at_10, 0.0);
    assert!(other.mean_tokens > 0.0);
    assert!(pair.systems["mira"].overall.nothing_relevant <= other.nothing_relevant);
    let loco = report.loco.as_ref().unwrap();
    assert_eq!(loco.grid[0], "configured");
    assert_eq!(loco.datasets.len(), 2);
    for (held, d) in loco.datasets.iter().zip(&report.datasets) {
        assert_eq!(held.dataset, d.name);
        // The configured point is the pipeline's own ranking: the same recall@10.
        let mira = d.systems["mira"].overall.recall_at_10;
        assert!(
            (held.configured_recall_at_10 - mira).abs() < 1e-9,
            "{held:?} {mira}"
        );
        let out = held.dataset_out_recall_at_10.unwrap();
        assert!((0.0..=1.0).contains(&out));
        assert!(held.dataset_out_chosen.is_some());
    }
    assert!(loco
        .stages
        .iter()
        .any(|s| s.stage == "neighbour propagation" && s.datasets.len() == 2));
    let table = mira::eval::render_table(&report, false);
    for part in ["pair:", "26:", "other", "data set out", "Stages"] {
        assert!(table.contains(part), "{part}: {table}");
    }
}
