//! The identity prompt over a table of captured conversations: no statement contradicts
//! another, the traits come before anything else and the defaults last, and nothing is
//! inferred from what a short conversation did not contain.

use crate::service::{capture, db, CASUAL, FORMAL_1, FORMAL_2};
use mira_soul::coherence::contradictions;
use mira_soul::service::{self, RecallRequest};
use mira_soul::statements::Source;
use mira_soul::storage::SqliteSoul;
use mira_soul::Settings;

/// One agent per row: the conversations captured for it, in order.
const TABLE: &[(&str, &[&str])] = &[
    ("formal", &[FORMAL_1]),
    ("formal-twice", &[FORMAL_1, FORMAL_2]),
    ("casual", &[CASUAL]),
    ("formal-then-casual", &[FORMAL_1, CASUAL, FORMAL_2, CASUAL]),
    (
        "curious",
        &["Hello! I am curious and love digging into puzzles. Let me explain step by step."],
    ),
    (
        "empathetic",
        &["User: My deploy failed again and I'm exhausted.
Assistant: I hear you, that sounds frustrating. I understand how draining this is. Take your time; we can go through it together, one step at a time.
User: ok
Assistant: That must be a lot to carry. No rush at all. I'm glad you reached out, and we will get there together."],
    ),
    (
        "enthusiastic-but-low-key-voice",
        &["Assistant: Wow, this is amazing! I love this idea, it's fantastic!
User: really?
Assistant: Absolutely, I'm thrilled! So cool! Let's build it together, this is awesome!"],
    ),
    (
        "humorous",
        &["Assistant: Haha, that bug is hilarious, it's basically a pun in code form. Just kidding, mostly. lol.
User: so how do I fix it?
Assistant: Honestly, funny enough, the fix is a single line. Joke's on the compiler."],
    ),
    (
        "technical-concise",
        &["Assistant: In short: the query planner skips the index. Briefly, add a composite index on (customer_id, created_at).
User: and the cache?
Assistant: Essentially, invalidate on write. TL;DR: the cache API needs a version key per schema change.
User: latency?
Assistant: To sum up: p99 latency drops once the index exists; benchmark the endpoint after deployment."],
    ),
    (
        "metaphorical-teacher",
        &["Assistant: Think of it as a library: the index is like a card catalogue. Picture this: without it, you walk every shelf. It's like a map for the data, an analogy I love.
User: and transactions?
Assistant: Imagine a bank vault with two keys. A transaction is akin to turning both keys at once, as if time stood still."],
    ),
    (
        "hedging-diplomat",
        &["Assistant: Perhaps we could consider another way. It might be that the schema is fine; I'm not sure. One perspective is to wait, though I could be mistaken.
User: so what do I do?
Assistant: Maybe try the smaller change first? It seems reasonable, but I might be wrong. Respectfully, I would suggest testing both approaches."],
    ),
    (
        "direct-lists",
        &["Assistant: Frankly, the answer is simple. You should do this:
- drop the unused index
- add the composite one
- rerun the benchmark
User: anything else?
Assistant: The bottom line: clearly the migration must run first. Simply put, you must never skip the backup:
- take the backup
- run the migration
- verify the counts"],
    ),
    (
        "long-serious",
        &[
            "Assistant: I would recommend that we analyze the logs. Therefore, the error is in the parser.
User: why?
Assistant: The stack trace shows it. Consequently, the fix belongs there.
User: ok
Assistant: Furthermore, the tests must cover it. It is important to verify the edge cases.",
            "Assistant: Regarding the release, I would advise a staged rollout. The checklist is ready.
User: fine
Assistant: Moreover, monitoring must be in place. Therefore, we wait for the metrics.
User: and then?
Assistant: Subsequently, the change is promoted. It is essential to document it.",
        ],
    ),
];

#[test]
fn no_prompt_of_the_table_contradicts_itself() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    assert!(TABLE.len() >= 10);
    let mut checked = 0;
    for (agent, conversations) in TABLE {
        for (i, text) in conversations.iter().enumerate() {
            capture(c, &s, agent, "m", text, i as i64 + 1);
        }
        for budget in [60, 100, 200, 1000] {
            let r = service::recall(
                c,
                &s,
                &RecallRequest {
                    agent_id: (*agent).into(),
                    budget: Some(budget),
                    context: None,
                },
            )
            .expect("recall");
            let found = contradictions(&r.prompt);
            assert!(
                found.is_empty(),
                "{agent} at {budget}: {found:#?}\n{}",
                r.prompt
            );
            // Traits first, defaults last.
            let sources: Vec<Source> = r.statements.iter().map(|x| x.source).collect();
            assert!(
                sources.windows(2).all(|w| w[0] <= w[1]),
                "{agent} at {budget}: {sources:?}"
            );
            checked += 1;
        }
        let st = service::status(c, &s, agent).expect("status");
        let summary = st.summary.expect("summary");
        let found = contradictions(&summary);
        assert!(found.is_empty(), "{agent} summary: {found:#?}\n{summary}");
    }
    assert_eq!(checked, TABLE.len() * 4);
}

#[test]
fn recall_keeps_the_observed_traits_before_any_default() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    let text = "Hello! I am curious and love digging into puzzles. Let me explain step by step.";
    let o = capture(c, &s, "ada", "m", text, 1);
    let traits: Vec<String> = o.traits.iter().map(|t| t.name.clone()).collect();
    assert!(
        traits.contains(&"curious".to_owned()) && traits.contains(&"patient".to_owned()),
        "{traits:?}"
    );
    for budget in [60, 100, 200] {
        let r = service::recall(
            c,
            &s,
            &RecallRequest {
                agent_id: "ada".into(),
                budget: Some(budget),
                context: None,
            },
        )
        .expect("recall");
        assert!(r.tokens as i64 <= budget, "{budget}: {}", r.tokens);
        let first_default = r
            .statements
            .iter()
            .position(|x| x.source == Source::Default)
            .unwrap_or(r.statements.len());
        for name in &traits {
            let at = r
                .statements
                .iter()
                .position(|x| x.source == Source::Trait && x.line.contains(name.as_str()));
            let at = at.unwrap_or_else(|| panic!("{budget}: {name} missing\n{}", r.prompt));
            assert!(
                at < first_default,
                "{budget}: {name} after a default\n{}",
                r.prompt
            );
            assert!(r.prompt.contains("confidence"), "{}", r.prompt);
        }
        // Nothing from what one short reply did not contain.
        for absent in [
            "rarely joke",
            "without metaphors",
            "matter-of-fact",
            "do not use emojis",
        ] {
            assert!(
                !r.prompt.contains(absent),
                "{budget}: {absent}\n{}",
                r.prompt
            );
        }
    }
}
