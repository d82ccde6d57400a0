use super::*;

const SEED: &str = "We decided to migrate to PostgreSQL for v2. Rejected: MySQL (not ACID), \
                    MongoDB (not relational). Reason: ACID and team expertise. Approved by \
                    CTO. Assigned to Jean.";

fn fp(content: &str, memory_type: MemoryType) -> Fingerprint {
    extract(content, memory_type, 2)
}

#[test]
fn seed_example_field_by_field() {
    let f = fp(SEED, MemoryType::Decision);
    assert_eq!(f.memory_type, Some(MemoryType::Decision));
    assert_eq!(f.decision.as_deref(), Some("PostgreSQL"));
    assert_eq!(f.rejected, vec!["MySQL", "MongoDB"]);
    assert_eq!(f.reasons, vec!["ACID", "team expertise"]);
    assert_eq!(f.approvals, vec!["CTO"]);
    assert_eq!(f.assignee.as_deref(), Some("Jean"));
    assert_eq!(f.deadline, None);
    assert!(f.key_facts.is_empty(), "{:?}", f.key_facts);
    assert_eq!(f.subjects[0], "PostgreSQL");
    assert!(f.subjects.len() <= 3);
    assert!(f
        .entities
        .iter()
        .any(|e| e.text == "PostgreSQL" && e.kind == EntityKind::Technology));
    assert_eq!(f.fact_count(), 7);
}

#[test]
fn fact_count_counts_every_field_but_subjects_and_entities() {
    let f = Fingerprint {
        memory_type: Some(MemoryType::Fact),
        subjects: vec!["a".into(), "b".into()],
        entities: vec![Entity {
            text: "X".into(),
            kind: EntityKind::Other,
        }],
        decision: Some("d".into()),
        rejected: vec!["r1".into(), "r2".into()],
        reasons: vec!["why".into()],
        assignee: Some("me".into()),
        approvals: vec!["boss".into()],
        deadline: Some("Friday".into()),
        key_facts: vec!["k = 1".into(), "j = 2".into()],
    };
    assert_eq!(f.fact_count(), 9);
    assert_eq!(Fingerprint::default().fact_count(), 0);
}

#[test]
fn reference_decision_and_fact() {
    let k = fp(
        "The team decided to adopt Kubernetes for deployment.",
        MemoryType::Decision,
    );
    assert_eq!(k.decision.as_deref(), Some("Kubernetes"));
    assert_eq!(k.subjects[0], "Kubernetes");
    let f = fp(
        "The database connection pool max is 100 connections.",
        MemoryType::Fact,
    );
    assert_eq!(f.deadline, None, "a bare number is never a deadline");
    assert_eq!(
        f.key_facts,
        vec!["database connection pool max is 100 connections"]
    );
    assert_eq!(f.subjects, vec!["database connection pool"]);
    assert_eq!(f.fact_count(), 1);
    let a = fp(
        "We decided to use PostgreSQL for the main database.",
        MemoryType::Decision,
    );
    assert_eq!(a.subjects[0], "PostgreSQL");
}

#[test]
fn preferences_and_alternatives() {
    let p = fp(
        "I prefer using Go over Python for this service.",
        MemoryType::Preference,
    );
    assert_eq!(p.rejected, vec!["Python"]);
    let p = fp("I prefer tabs", MemoryType::Preference);
    assert_eq!(p.subjects, vec!["Preference"]);
    let d = fp(
        "We use Redis rather than Memcached or Hazelcast because it has streams.",
        MemoryType::Decision,
    );
    assert_eq!(d.rejected, vec!["Memcached", "Hazelcast"]);
    assert_eq!(d.reasons, vec!["it has streams"]);
    let n = fp(
        "We worked over the weekend on the rollout.",
        MemoryType::SessionNote,
    );
    assert!(n.rejected.is_empty());
    let d = fp("We chose Go over the weekend.", MemoryType::Decision);
    assert!(d.rejected.is_empty());
}

#[test]
fn passive_voice() {
    let d = fp(
        "PostgreSQL was chosen for analytics. MySQL was rejected because of licensing.",
        MemoryType::Decision,
    );
    assert_eq!(d.decision.as_deref(), Some("PostgreSQL"));
    assert_eq!(d.rejected, vec!["MySQL"]);
    assert_eq!(d.reasons, vec!["licensing"]);
    let d = fp("We decided against MongoDB.", MemoryType::Decision);
    assert_eq!(d.decision, None);
    assert_eq!(d.rejected, vec!["MongoDB"]);
}

#[test]
fn reasons_since_and_labels() {
    let d = fp(
        "Fixed the panic in the HTTP handler because the request body was nil",
        MemoryType::DebugLog,
    );
    assert_eq!(d.reasons, vec!["the request body was nil"]);
    let s = fp("We have used Rust since 2020.", MemoryType::Fact);
    assert!(s.reasons.is_empty());
    let s = fp("We keep SQLite since it is embedded.", MemoryType::Decision);
    assert_eq!(s.reasons, vec!["it is embedded"]);
    let r = fp(
        "Rationale: the current cluster cannot absorb the peak traffic of the sales season.",
        MemoryType::Decision,
    );
    assert_eq!(
        r.reasons,
        vec!["the current cluster cannot absorb the peak traffic of the sales season"]
    );
}

#[test]
fn assignees_approvals_deadlines() {
    let f = fp(
        "Jean Dupont will take care of the rollout. Marie approved it. Deadline: 15/04/2024.",
        MemoryType::Decision,
    );
    assert_eq!(f.assignee.as_deref(), Some("Jean Dupont"));
    assert_eq!(f.approvals, vec!["Marie"]);
    assert_eq!(f.deadline.as_deref(), Some("15/04/2024"));
    let f = fp(
        "Owner: @alice. Validated by the CTO and Sophie. Ship it by Friday.",
        MemoryType::Decision,
    );
    assert_eq!(f.assignee.as_deref(), Some("alice"));
    assert_eq!(f.approvals, vec!["CTO", "Sophie"]);
    assert_eq!(f.deadline.as_deref(), Some("Friday"));
    let f = fp(
        "The migration is planned for sprint 14, before April 30, 2025.",
        MemoryType::Decision,
    );
    assert_eq!(f.deadline.as_deref(), Some("April 30, 2025"));
    let f = fp("Planned for sprint 14.", MemoryType::Decision);
    assert_eq!(f.deadline.as_deref(), Some("Sprint 14"));
    let f = fp("Latency went down by 15% due to caching.", MemoryType::Fact);
    assert_eq!(f.deadline, None);
    assert_eq!(f.reasons, vec!["caching"]);
    let f = fp("Redis will handle the sessions.", MemoryType::Decision);
    assert_eq!(f.assignee, None, "a technology is not an assignee");
}

#[test]
fn subjects_explicit_domain_and_default() {
    let f = fp(
        "Topic: the Q3 roadmap. We listed the risks.",
        MemoryType::SessionNote,
    );
    assert_eq!(f.subjects[0], "the Q3 roadmap");
    let f = fp(
        "We had a good discussion about the roadmap today.",
        MemoryType::SessionNote,
    );
    assert_eq!(f.subjects, vec!["roadmap"]);
    let f = fp("Nothing much happened.", MemoryType::SessionNote);
    assert_eq!(f.subjects, vec!["Note"]);
    let f = fp("it crashed", MemoryType::DebugLog);
    assert_eq!(f.subjects, vec!["Debug"]);
}

#[test]
fn key_facts_and_settings() {
    let f = fp(
        "Update: the API rate limit is now 500 requests per minute, and timeout=30s. The team is happy.",
        MemoryType::Fact,
    );
    assert_eq!(
        f.key_facts,
        vec![
            "API rate limit is now 500 requests per minute",
            "timeout=30s"
        ]
    );
    let f = fp(
        "The server listens on port 8080; TLS is enabled.",
        MemoryType::Fact,
    );
    assert_eq!(
        f.key_facts,
        vec!["server listens on port 8080", "TLS is enabled"]
    );
}

#[test]
fn french_fingerprint() {
    let f = fp(
        "Nous avons choisi Redis plutôt que Memcached parce que l'équipe le connaît. \
         Validé par Sophie. Assigné à Marie, avant le 15 avril 2024.",
        MemoryType::Decision,
    );
    assert_eq!(f.decision.as_deref(), Some("Redis"));
    assert_eq!(f.rejected, vec!["Memcached"]);
    assert_eq!(f.reasons, vec!["l'équipe le connaît"]);
    assert_eq!(f.approvals, vec!["Sophie"]);
    assert_eq!(f.assignee.as_deref(), Some("Marie"));
    assert_eq!(f.deadline.as_deref(), Some("15 avril 2024"));
    let f = fp(
        "Nous avons décidé d'utiliser PostgreSQL pour la v2. Raison : ACID et expertise.",
        MemoryType::Decision,
    );
    assert_eq!(f.decision.as_deref(), Some("PostgreSQL"));
    assert_eq!(f.reasons, vec!["ACID", "expertise"]);
    let f = fp(
        "Éric s'en charge d'ici fin mars, car le sprint 3 est plein.",
        MemoryType::Decision,
    );
    assert_eq!(f.assignee.as_deref(), Some("Éric"));
    assert_eq!(f.deadline.as_deref(), Some("fin mars"));
    assert_eq!(f.reasons, vec!["le sprint 3 est plein"]);
}

#[test]
fn conversational_text_is_not_over_read() {
    let q = "What made you decide to transition and join the community?";
    assert_eq!(fp(q, MemoryType::SessionNote).decision, None);
    let c = fp(
        "I chose them 'cause they help folks with adoption.",
        MemoryType::Decision,
    );
    assert_eq!(c.decision, None);
    assert_eq!(c.reasons, vec!["they help folks with adoption"]);
    let i = fp(
        "Use oil instead of butter, make sure it is hot.",
        MemoryType::Decision,
    );
    assert_eq!(i.rejected, vec!["butter"]);
    let b = fp(
        "So glad you bonded over our love of nature.",
        MemoryType::Decision,
    );
    assert!(b.rejected.is_empty());
    let a = fp("We thought about trying it.", MemoryType::SessionNote);
    assert_eq!(a.subjects, vec!["Note"]);
    let n = fp("Redis was not chosen for sessions.", MemoryType::Decision);
    assert_eq!(n.decision, None);
    let n = fp("It was decided to use Kafka.", MemoryType::Decision);
    assert_eq!(n.decision.as_deref(), Some("Kafka"));
    let d = fp("The report is due in 2 weeks.", MemoryType::Fact);
    assert_eq!(d.deadline.as_deref(), Some("in 2 weeks"));
    let d = fp("On livre dans 3 jours.", MemoryType::Fact);
    assert_eq!(d.deadline, None, "a relative date needs a deadline cue");
}

#[test]
fn huge_input_gives_a_small_fingerprint() {
    let big = format!("{SEED} ").repeat(400);
    let f = fp(&big[..big.len().min(65536)], MemoryType::Decision);
    let json = f.to_json();
    assert!(json.len() < 4096, "{} bytes", json.len());
    let fields = [
        f.decision.iter().collect::<Vec<_>>(),
        f.rejected.iter().collect(),
        f.reasons.iter().collect(),
    ];
    assert!(fields.iter().flatten().all(|s| s.chars().count() <= 200));
    assert_eq!(f.decision.as_deref(), Some("PostgreSQL"));
}

#[test]
fn json_round_trip() {
    let f = fp(SEED, MemoryType::Decision);
    let back: Fingerprint = serde_json::from_str(&f.to_json()).unwrap();
    assert_eq!(back, f);
}
