//! Memory types on a labelled table of everyday sentences an agent stores: stable facts and
//! configuration, team rules, commitments, preferences, decisions, debug output and what
//! happened in a session. Rules and commitments are decisions (they last like one); a session
//! note is what happened in one session. The accuracy must stay at 0.9 or more.

use mira_core::classify::classify;
use mira_core::memory::MemoryType::{self, *};

#[rustfmt::skip]
const TABLE: &[(&str, MemoryType)] = &[
    // Stable facts and configuration.
    ("The build server runs Jenkins on port 8080.", Fact),
    ("We use MySQL for the billing database.", Fact),
    ("The production region is eu-west-1.", Fact),
    ("The staging database is backed up every night at 2am.", Fact),
    ("Our API gateway is Kong, deployed on three nodes.", Fact),
    ("The frontend is written in TypeScript with React 18.", Fact),
    ("Alice leads the platform team.", Fact),
    ("The payments service talks to Stripe over a webhook.", Fact),
    ("Logs are shipped to Loki and kept for 30 days.", Fact),
    ("The office Wi-Fi password is stored in 1Password.", Fact),
    ("The main branch is protected and needs two approvals.", Fact),
    ("Our CI runs on GitHub Actions.", Fact),
    ("The mobile app supports iOS 16 and later.", Fact),
    ("The customer database holds 2 million rows.", Fact),
    ("Redis is used as the session cache.", Fact),
    ("The on-call rotation changes every Monday.", Fact),
    // Team rules (decisions that stand).
    ("Never deploy on Fridays.", Decision),
    ("Always run cargo fmt before committing.", Decision),
    ("Do not push directly to main.", Decision),
    ("Every pull request must have a linked ticket.", Decision),
    ("Secrets must never be committed to the repository.", Decision),
    ("Make sure to tag releases with the version number.", Decision),
    ("All services must expose a /health endpoint.", Decision),
    ("Don't use the shared staging account for load tests.", Decision),
    // Commitments and plans with an owner or a date.
    ("Bob will implement the login page by Friday.", Decision),
    ("Carol is going to migrate the DNS records next week.", Decision),
    ("We will release version 2.0 on March 3.", Decision),
    ("Dave will review the security audit by the end of the month.", Decision),
    // Decisions.
    ("We decided to use PostgreSQL for the main database.", Decision),
    ("We went with gRPC instead of REST for internal calls.", Decision),
    ("The team chose Terraform over Pulumi.", Decision),
    ("We switched from MySQL to PostgreSQL after all.", Decision),
    ("Decision: the cache TTL stays at five minutes.", Decision),
    ("We agreed to drop support for Python 3.8.", Decision),
    // Preferences.
    ("I prefer tabs over spaces in Go code.", Preference),
    ("Alice likes short commit messages.", Preference),
    ("I'd rather have fewer, larger pull requests.", Preference),
    ("My favourite editor is Helix.", Preference),
    ("I hate long meetings on Mondays.", Preference),
    ("I don't like emojis in commit messages.", Preference),
    ("We love pairing on hard bugs... well, on hard problems.", Preference),
    ("Bob prefers dark mode in every tool.", Preference),
    // Debug output and incidents.
    ("thread 'main' panicked at src/main.rs:42: index out of bounds", DebugLog),
    ("Fixed the deadlock in the job queue by taking the locks in order.", DebugLog),
    ("The import failed with a timeout after 30 s.", DebugLog),
    ("Root cause of the outage: the certificate expired.", DebugLog),
    ("Got a segfault in the image resizer when the file was empty.", DebugLog),
    ("Error: connection refused on 10.0.0.5:5432", DebugLog),
    ("The nightly build is broken since the upgrade.", DebugLog),
    ("Memory leak in the websocket handler, heap grows 50 MB per hour.", DebugLog),
    // What happened in a session, and chit-chat.
    ("We had a good discussion about the roadmap today.", SessionNote),
    ("Talked with Alice about the onboarding of the new intern.", SessionNote),
    ("Thanks, that helps a lot!", SessionNote),
    ("Let's pick this up again tomorrow.", SessionNote),
    ("Meeting notes: we went over the Q3 goals.", SessionNote),
    ("I spent the afternoon reading the Kafka docs.", SessionNote),
    ("Good morning! How was your weekend?", SessionNote),
    ("We reviewed three pull requests in the sync.", SessionNote),
    ("I'm not sure yet, let me think about it.", SessionNote),
    ("Caroline: I went to a support group yesterday and it was really powerful.", SessionNote),
    ("Melanie: What made you decide to take up painting?", SessionNote),
    ("The demo went well and the client was happy.", SessionNote),
];

#[test]
fn the_labelled_table_is_typed_right() {
    let wrong: Vec<String> = TABLE
        .iter()
        .filter(|(text, want)| classify(text) != *want)
        .map(|(text, want)| format!("{text:?}: want {want}, got {}", classify(text)))
        .collect();
    let accuracy = 1.0 - wrong.len() as f64 / TABLE.len() as f64;
    eprintln!(
        "classification: {} sentences, accuracy {accuracy:.3}\n{}",
        TABLE.len(),
        wrong.join("\n")
    );
    assert!(TABLE.len() >= 60);
    assert!(
        accuracy >= 0.9,
        "accuracy {accuracy:.3}:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_issue_sentences_last() {
    for text in [
        "The build server runs Jenkins on port 8080.",
        "We use MySQL for the billing database.",
        "Never deploy on Fridays.",
        "Always run cargo fmt before committing.",
        "The production region is eu-west-1.",
        "Bob will implement the login page by Friday.",
    ] {
        assert!(
            matches!(classify(text), Fact | Decision),
            "{text}: {}",
            classify(text)
        );
    }
}
