//! Facts that change, through MCP: a table of update pairs (about half without cue words) and
//! of pairs that must not supersede, stored in a wing of their own each, then recalled.

use crate::mcp_common::{is_error, recalled_ids, StdioClient};
use serde_json::{json, Value};

/// (earlier, later, a query about the slot).
#[rustfmt::skip]
const UPDATES: &[(&str, &str, &str)] = &[
    // Where someone lives.
    ("I live in Paris.", "I moved to Berlin last month.", "where do I live?"),
    ("Alice lives in Lyon.", "Alice relocated to Madrid in May.", "where does Alice live?"),
    ("We are based in Boston.", "We moved to Denver this spring.", "where are we based?"),
    ("Caroline: I live in Sweden now.", "Caroline: I moved to Norway in June.", "where does Caroline live?"),
    ("Bob lives in Seattle.", "Bob moved from Seattle to Austin.", "where does Bob live?"),
    ("I am based in London.", "Update: I am now based in Dublin.", "where am I based?"),
    // Phone and email.
    ("My phone number is +33 6 12 34 56 78.", "My new number is +49 170 1234567.", "what is my phone number?"),
    ("My email is ana@old.example.com.", "My new email address is ana@new.example.com.", "what is my email?"),
    ("Dave's number is 555-0100.", "Dave's number is 555-0199.", "what is Dave's number?"),
    ("My email address is j@a.example.", "My email is now j@b.example.", "what is my email address?"),
    // Employer.
    ("I work at Acme.", "I joined Globex in March.", "where do I work?"),
    ("Maria works for Initech.", "Maria now works at Hooli.", "where does Maria work?"),
    ("Tom works at Contoso.", "Tom started at Fabrikam last week.", "where does Tom work?"),
    // Who leads or owns what.
    ("Bob leads the platform team.", "Carol leads the platform team now.", "who leads the platform team?"),
    ("Erin owns the billing service.", "Frank owns the billing service since Monday.", "who owns the billing service?"),
    ("Gina manages the design team.", "Hank is the new manager of the design team.", "who manages the design team?"),
    ("Ivy heads the research group.", "Jack heads the research group from now on.", "who heads the research group?"),
    ("Kim runs the support team.", "Update: Lee runs the support team.", "who runs the support team?"),
    // Tools and stack.
    ("We use MySQL for the billing database.", "We switched from MySQL to PostgreSQL after all.", "which database for billing?"),
    ("We use Jenkins for CI.", "We use GitHub Actions for CI.", "what do we use for CI?"),
    ("We use Redis for the session cache.", "We moved to Memcached for the session cache.", "what is the session cache?"),
    ("Our team uses Jira for tickets.", "Our team uses Linear for tickets.", "where are tickets tracked?"),
    ("We use Datadog for monitoring.", "We migrated to Grafana for monitoring.", "what is our monitoring tool?"),
    ("We use Slack for chat.", "We switched to Teams for chat.", "which chat tool?"),
    ("We run on AWS for hosting.", "We moved from AWS to GCP.", "where do we host?"),
    ("We use Terraform for infrastructure.", "We use Pulumi for infrastructure.", "what do we use for infrastructure?"),
    ("We use Sentry for error tracking.", "We migrated from Sentry to Rollbar.", "what do we use for error tracking?"),
    ("We use Webpack for bundling.", "We now use Vite for bundling.", "what is our bundler?"),
    // When something happens.
    ("The weekly meeting is on Tuesday.", "Actually the weekly meeting is on Thursday.", "when is the weekly meeting?"),
    ("The demo is on Friday.", "The demo was moved to Monday.", "when is the demo?"),
    ("The release is on March 3.", "The release has been moved to March 10.", "when is the release?"),
    ("The standup is at 9am.", "The standup is at 10am.", "when is the standup?"),
    ("The design review is on Wednesday.", "The design review got moved to Friday.", "when is the design review?"),
    ("The deadline is on June 1.", "The deadline is now June 15.", "when is the deadline?"),
    // Favourites.
    ("My favourite editor is Vim.", "My favourite editor is Helix.", "what is my favourite editor?"),
    ("My favorite band is Muse.", "My new favorite band is Placebo.", "what is my favorite band?"),
    // Limits, prices, versions.
    ("The API rate limit is 100 requests per minute.", "The API rate limit is 500 requests per minute.", "what is the API rate limit?"),
    ("The request timeout is 30 seconds.", "The request timeout was raised to 60 seconds.", "what is the request timeout?"),
    ("The monthly price is $10.", "The monthly price is now $12.", "what is the monthly price?"),
    ("The upload size limit is 10MB.", "The upload size limit was changed to 25MB.", "what is the upload size limit?"),
    ("The cache TTL is 300 seconds.", "The cache TTL is 600 seconds.", "what is the cache TTL?"),
    ("The database port is 5432.", "The database port is 6432.", "which port does the database use?"),
    ("The storage quota is 50GB.", "The storage quota went up to 100GB.", "what is the storage quota?"),
    ("The team budget is $5000.", "The team budget was lowered to $4000.", "what is the team budget?"),
    ("The node version is 18.", "The node version is 20.", "which node version?"),
    ("The retry count is 3.", "The retry count is now 5.", "what is the retry count?"),
    ("The session timeout is 15 minutes.", "The session timeout is 30 minutes.", "what is the session timeout?"),
    ("The build size limit is 200MB.", "The build size limit increased to 300MB.", "what is the build size limit?"),
    ("The free plan limit is 3 projects.", "The free plan limit is 5 projects.", "what is the free plan limit?"),
    ("Bob lives in Rome.", "Bob no longer lives in Rome, he moved to Milan.", "where does Bob live?"),
    // Another value and nothing else.
    ("Alice lives in Paris.", "Alice lives in Rome.", "where does Alice live?"),
    ("I work at Acme.", "I work at Umbrella.", "where do I work?"),
    ("We use Postgres for the user store.", "We use CockroachDB for the user store.", "which database holds users?"),
    ("The retro is on Monday.", "The retro is on Wednesday.", "when is the retro?"),
    ("My favourite drink is coffee.", "My favourite drink is green tea.", "what is my favourite drink?"),
    ("The API port is 8080.", "The API port is 9090.", "which port does the API use?"),
    ("Priya owns the mobile app.", "Omar owns the mobile app.", "who owns the mobile app?"),
    ("My email is li@corp.example.", "My email is li@home.example.", "what is my email?"),
    ("Sam lives in Oslo.", "Sam is based in Bergen.", "where is Sam?"),
    ("The launch is on May 2.", "The launch is on May 9.", "when is the launch?"),
    ("The monthly quota is 1000 calls.", "The monthly quota is 2500 calls.", "what is the monthly quota?"),
    ("We use Yarn for packages.", "We use Bun for packages.", "what do we use for packages?"),
    ("Dave leads the QA team.", "Eve leads the QA team.", "who leads the QA team?"),
    ("Nina works for Stark.", "Nina works for Wayne.", "who does Nina work for?"),
    ("We use Zoom for meetings.", "We use Meet for meetings.", "what do we use for meetings?"),
    ("The planning call is on Tuesday.", "The planning call is on Friday.", "when is the planning call?"),
    ("The worker timeout is 45 seconds.", "The worker timeout is 90 seconds.", "what is the worker timeout?"),
    ("My favourite city is Kyoto.", "My favourite city is Lisbon.", "what is my favourite city?"),
    ("Raj heads the infra team.", "Mia heads the infra team.", "who heads the infra team?"),
    ("Leo lives in Dublin.", "Leo lives in Cork.", "where does Leo live?"),
];

/// (earlier, later): neither replaces the other.
#[rustfmt::skip]
const NOT_UPDATES: &[(&str, &str)] = &[
    ("I like ramen.", "I also like sushi."),
    ("Alice lives in Paris.", "Bob lives in Berlin."),
    ("We use MySQL for the billing database.", "We use PostgreSQL for the analytics database."),
    ("We use MySQL for the billing database.", "Do we still use MySQL for billing?"),
    ("I live in Paris.", "I visited Berlin last month."),
    ("Bob leads the platform team.", "Carol leads the data team."),
    ("The weekly meeting is on Tuesday.", "The demo is on Thursday."),
    ("The API rate limit is 100 requests per minute.", "The upload size limit is 10MB."),
    ("My favourite editor is Vim.", "My favourite language is Rust."),
    ("I work at Acme.", "My brother works at Globex."),
    ("Erin owns the billing service.", "Erin owns the search service too."),
    ("We use Redis for the session cache.", "Redis is fast."),
    ("The standup is at 9am.", "I was late to the standup today."),
    ("Alice lives in Lyon.", "Alice loves Lyon."),
    ("My phone number is 555-0100.", "Call me tomorrow."),
    ("The release is on March 3.", "The release notes are in the wiki."),
    ("We use Jenkins for CI.", "Jenkins was slow today."),
    ("The request timeout is 30 seconds.", "The request took 12 seconds."),
    ("I work at Acme.", "I work at Acme."),
    ("Bob lives in Seattle.", "Bob's sister lives in Portland."),
    ("We use Slack for chat.", "We use Slack for alerts too."),
    ("The cache TTL is 300 seconds.", "The cache hit rate is 90%."),
    ("Maria works for Initech.", "Maria met a friend from Hooli."),
    ("The deadline is on June 1.", "Is the deadline still June 1?"),
    ("My email is ana@old.example.com.", "Send the report to ana@old.example.com."),
    ("Gina manages the design team.", "Gina presented the design review."),
    ("We use Terraform for infrastructure.", "Terraform 1.6 is out."),
    ("The monthly price is $10.", "The yearly price is $100."),
    ("The node version is 18.", "The python version is 3.12."),
    ("Kim runs the support team.", "Kim runs every morning."),
];

fn stored(c: &mut StdioClient, content: &str, wing: &str) -> Value {
    let r = c.call_tool("mira_store", json!({"content": content, "wing": wing}));
    assert!(!is_error(&r), "{r}");
    r["structuredContent"].clone()
}

fn superseded(outcome: &Value) -> Vec<String> {
    outcome["superseded"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn updates_in_everyday_wording_supersede_and_lookalikes_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(dir.path(), &["serve"]);
    c.initialize();
    let mut missed = Vec::new();
    for (n, (old, new, query)) in UPDATES.iter().enumerate() {
        let wing = format!("u{n}");
        let o = stored(&mut c, old, &wing);
        let s = stored(&mut c, new, &wing);
        let (old_id, new_id) = (o["id"].as_str().unwrap(), s["id"].as_str().unwrap());
        if !superseded(&s).iter().any(|id| id == old_id) {
            missed.push(format!("{old:?} → {new:?}"));
            continue;
        }
        let r = c.call_tool("mira_recall", json!({"query": query, "wing": wing}));
        let ids = recalled_ids(&r);
        if n == 0 {
            // mira_load says which slot replaced it.
            let l = c.call_tool("mira_load", json!({"id": old_id}));
            let want = format!(
                "Superseded by: {} (location of i: paris → berlin)",
                &new_id[..8]
            );
            assert!(crate::mcp_common::text(&l).contains(&want), "{l}");
        }
        let pos = |id| ids.iter().position(|x| *x == id);
        assert!(
            pos(new_id) < pos(old_id).or(Some(usize::MAX)),
            "{query}: {r}"
        );
        assert!(pos(new_id).is_some(), "{query}: {r}");
    }
    let mut false_alarms = Vec::new();
    for (n, (old, new)) in NOT_UPDATES.iter().enumerate() {
        let wing = format!("n{n}");
        stored(&mut c, old, &wing);
        let s = stored(&mut c, new, &wing);
        if !superseded(&s).is_empty() {
            false_alarms.push(format!("{old:?} → {new:?}"));
        }
    }
    let found = UPDATES.len() - missed.len();
    let recall = found as f64 / UPDATES.len() as f64;
    let precision = found as f64 / (found + false_alarms.len()).max(1) as f64;
    eprintln!(
        "supersession: {} update pairs, {} others; recall {recall:.3}, precision {precision:.3}\nmissed:\n{}\nfalse alarms:\n{}",
        UPDATES.len(),
        NOT_UPDATES.len(),
        missed.join("\n"),
        false_alarms.join("\n")
    );
    assert!(UPDATES.len() >= 50 && NOT_UPDATES.len() >= 30);
    assert!(
        false_alarms.is_empty(),
        "false alarms:\n{}",
        false_alarms.join("\n")
    );
    assert!(recall >= 0.9, "missed:\n{}", missed.join("\n"));
}

#[test]
fn a_request_to_forget_retracts_and_restore_brings_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(dir.path(), &["serve"]);
    c.initialize();
    let budget = stored(&mut c, "The Q3 marketing budget is $50,000.", "plans")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    stored(
        &mut c,
        "The launch party is on Friday at the office.",
        "plans",
    );
    let ask = c.call_tool(
        "mira_store",
        json!({"content": "Please disregard what I said about the marketing budget.", "wing": "plans"}),
    );
    assert_eq!(
        ask["structuredContent"]["retracted"],
        json!([budget]),
        "{ask}"
    );
    assert!(
        crate::mcp_common::text(&ask).contains(&format!("mira restore {}", &budget[..8])),
        "{ask}"
    );
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "marketing budget", "wing": "plans"}),
    );
    assert!(!crate::mcp_common::text(&r).contains("$50,000"), "{r}");
    let vague = stored(&mut c, "Forget it.", "plans");
    assert_eq!(vague["retracted"], json!([]));
    drop(c);
    let out = crate::common::stdout(
        crate::common::mira(&dir.path().join("store")).args(["restore", &budget[..8]]),
    );
    // Summaries are the memory's first words.
    assert!(
        out.starts_with("Unarchived 1 memory:")
            && out.contains("The Q3 marketing budget is $50,000"),
        "{out}"
    );
    let mut c = StdioClient::spawn(dir.path(), &["serve"]);
    c.initialize();
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "marketing budget", "wing": "plans"}),
    );
    assert!(crate::mcp_common::text(&r).contains("$50,000"), "{r}");
}
