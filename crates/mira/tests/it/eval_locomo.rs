//! `mira eval locomo` on one development conversation (a bounded number of questions).

use crate::common::locomo_dev_dir as locomo_dir;
use std::sync::Arc;

#[test]
fn eval_reports_every_system_and_category() {
    let dir = locomo_dir();
    let conv = mira::eval::parse_conversation(&dir.join("30.json")).unwrap();
    assert!(conv.turns.len() > 300, "{}", conv.turns.len());
    assert!(conv.turns.windows(2).all(|w| w[0].at <= w[1].at));
    let model = mira_embed::MiniLm::load(&mira_embed::resolve_model_dir(None)).unwrap();
    let questions = tempfile::NamedTempFile::new().unwrap();
    let opts = mira::eval::EvalOptions {
        path: dir.join("30.json"),
        budget: 2000,
        max_questions: Some(40),
        k: None,
        loco: false,
        questions: Some(questions.path().to_path_buf()),
        text_ranks: false,
    };
    let report = mira::eval::run(&mira::Config::default(), Arc::new(model), &opts).unwrap();
    assert_eq!(report.conversations.len(), 1);
    assert_eq!(report.conversations[0].id, "30");
    assert_eq!(report.turns, conv.turns.len());
    assert!(report.questions >= 30);
    for name in ["mira", "bm25", "dense", "rrf", "fts"] {
        let s = &report.systems[name];
        let m = &s.overall;
        for v in [
            m.recall_at_5,
            m.recall_at_10,
            m.session_recall_at_10,
            m.budget_recall,
        ] {
            assert!((0.0..=1.0).contains(&v), "{name}: {v}");
        }
        assert!(m.recall_at_5 <= m.recall_at_10 + 1e-9);
        assert!(m.mean_tokens > 0.0 && m.mean_tokens <= 2000.0);
        assert!(m.p50_ms <= m.p95_ms);
    }
    // The retrievers find evidence far above chance (a random top 10 of ~370 turns finds ~3%).
    assert!(
        report.systems["mira"].overall.recall_at_10 > 0.2,
        "{:?}",
        report.systems["mira"].overall
    );
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["systems"]["mira"]["by_category"]["1"]["recall@10"].is_number());
    assert!(json["systems"]["rrf"]["overall"]["recall@10"].is_number());
    assert!(json["conversations"][0]["systems"]["mira"]["recall@10"].is_number());
    assert!(json["questions"].is_number() && json["seconds"].is_number());
    let table = mira::eval::render_table(&report, true);
    assert!(table.contains("Per conversation"), "{table}");
    // The questions file: one line per question asked, each system's best as (turn, relevance).
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(questions.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), report.questions);
    let turn_ids: std::collections::HashSet<&str> =
        conv.turns.iter().map(|t| t.dia_id.as_str()).collect();
    for l in &lines {
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
        path: locomo_dir().join("30.json"),
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
