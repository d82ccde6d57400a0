//! The timeline use case: filters, dates, pagination, archived and superseded memories.

use crate::common::hash_app;
use chrono::{DateTime, Duration, TimeZone, Utc};
use mira::usecases::access::Access;
use mira::usecases::archive::{archive, ArchiveRequest};
use mira::usecases::store::{store, store_batch, StoreRequest};
use mira::usecases::timeline::{render_text, timeline, TimelineRequest};
use mira::usecases::UseCaseError;
use mira::App;
use mira_core::memory::MemoryId;
use mira_core::render::short_id;
use mira_core::MemoryType;

fn base() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 3, 1, 12, 0, 0).unwrap()
}

fn put(app: &App, content: &str, wing: &str, ty: &str, at: DateTime<Utc>) -> MemoryId {
    let req = StoreRequest {
        content: content.into(),
        wing: wing.into(),
        memory_type: Some(ty.into()),
        created_at: Some(at),
        ..StoreRequest::default()
    };
    store(app, &Access::local(), req).unwrap().id
}

fn ids(app: &App, req: &TimelineRequest) -> Vec<MemoryId> {
    timeline(app, &Access::local(), req)
        .unwrap()
        .items
        .iter()
        .map(|i| i.id)
        .collect()
}

/// Four memories one hour apart: three in `alpha`, one in `beta`.
fn fixture(app: &App) -> [MemoryId; 4] {
    [
        put(
            app,
            "We decided to use PostgreSQL for the main database.",
            "alpha",
            "decision",
            base(),
        ),
        put(
            app,
            "The API listens on port 8080.",
            "alpha",
            "fact",
            base() + Duration::hours(1),
        ),
        put(
            app,
            "We had a good discussion about the roadmap today.",
            "alpha",
            "session_note",
            base() + Duration::hours(2),
        ),
        put(
            app,
            "The cache TTL is 300 seconds.",
            "beta",
            "fact",
            base() + Duration::hours(3),
        ),
    ]
}

#[test]
fn filters_by_wing_room_and_type_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let [a, b, c, d] = fixture(&app);
    assert_eq!(ids(&app, &TimelineRequest::default()), vec![d, c, b, a]);
    let alpha = TimelineRequest {
        wing: Some("alpha".into()),
        ..TimelineRequest::default()
    };
    assert_eq!(ids(&app, &alpha), vec![c, b, a]);
    let oldest = TimelineRequest {
        order: Some("oldest".into()),
        ..alpha.clone()
    };
    assert_eq!(ids(&app, &oldest), vec![a, b, c]);
    let room = TimelineRequest {
        room: Some("decisions".into()),
        ..alpha.clone()
    };
    assert_eq!(ids(&app, &room), vec![a]);
    let facts = TimelineRequest {
        memory_type: Some("fact".into()),
        ..TimelineRequest::default()
    };
    assert_eq!(ids(&app, &facts), vec![d, b]);
    let alpha_facts = TimelineRequest {
        memory_type: Some("fact".into()),
        ..alpha.clone()
    };
    assert_eq!(ids(&app, &alpha_facts), vec![b]);
    let one = TimelineRequest {
        limit: Some(1),
        ..alpha.clone()
    };
    let page = timeline(&app, &Access::local(), &one).unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].id, c);
    assert!(page.next_cursor.is_some());
    // Blank strings (as an MCP client may send) mean "absent".
    let blank = TimelineRequest {
        wing: Some(" ".into()),
        room: Some(String::new()),
        ..TimelineRequest::default()
    };
    assert_eq!(ids(&app, &blank).len(), 4);
}

#[test]
fn text_form_follows_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let [a, b, c, _] = fixture(&app);
    let out = timeline(
        &app,
        &Access::local(),
        &TimelineRequest {
            wing: Some("alpha".into()),
            ..TimelineRequest::default()
        },
    )
    .unwrap();
    assert!(out.next_cursor.is_none());
    let text = render_text(&out);
    let (sa, sb, sc) = (short_id(a), short_id(b), short_id(c));
    assert!(
        text.starts_with(&format!(
            "=== TIMELINE: alpha ===\n\n[2024-03-01 14:00] {sc} session_note: We had a good discussion about the roadmap today.\n[2024-03-01 13:00] {sb} fact: "
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("[2024-03-01 12:00] {sa} decision: PostgreSQL")),
        "{text}"
    );
    assert!(!text.contains("next_cursor"), "{text}");
    let room = render_text(
        &timeline(
            &app,
            &Access::local(),
            &TimelineRequest {
                wing: Some("alpha".into()),
                room: Some("facts".into()),
                ..TimelineRequest::default()
            },
        )
        .unwrap(),
    );
    assert!(
        room.starts_with(&format!(
            "=== TIMELINE: alpha ===\nRoom: facts\n\n[2024-03-01 13:00] {sb} fact: "
        )),
        "{room}"
    );
    let all = render_text(&timeline(&app, &Access::local(), &TimelineRequest::default()).unwrap());
    assert!(
        all.starts_with("=== TIMELINE: all wings ===\n\n[2024-03-01 15:00] ")
            && all
                .lines()
                .nth(2)
                .is_some_and(|l| l.ends_with(" beta | fact: The cache TTL is 300 seconds.")),
        "{all}"
    );
    let paged = render_text(
        &timeline(
            &app,
            &Access::local(),
            &TimelineRequest {
                limit: Some(2),
                ..TimelineRequest::default()
            },
        )
        .unwrap(),
    );
    assert!(paged.contains("\n\nnext_cursor: c"), "{paged}");
    let none = render_text(
        &timeline(
            &app,
            &Access::local(),
            &TimelineRequest {
                wing: Some("nobody".into()),
                ..TimelineRequest::default()
            },
        )
        .unwrap(),
    );
    assert_eq!(none, "=== TIMELINE: nobody ===\n\n(no memories)\n");
}

#[test]
fn since_and_until_accept_dates_timestamps_and_relative_ages() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let [a, b, c, d] = fixture(&app);
    let q = |since: Option<&str>, until: Option<&str>| {
        ids(
            &app,
            &TimelineRequest {
                since: since.map(Into::into),
                until: until.map(Into::into),
                now: Some(base() + Duration::minutes(150)),
                ..TimelineRequest::default()
            },
        )
    };
    // A date long ago as `since` keeps everything (the reference kept nothing: its date filters
    // were broken); as `until` keeps nothing.
    assert_eq!(q(Some("2000-01-01"), None), vec![d, c, b, a]);
    assert!(q(None, Some("2000-01-01")).is_empty());
    // A bare `until` date includes that whole day; `since` starts at midnight.
    assert_eq!(q(Some("2024-03-01"), Some("2024-03-01")), vec![d, c, b, a]);
    assert!(q(Some("2024-03-02"), None).is_empty());
    assert!(q(None, Some("2024-02-29")).is_empty());
    // RFC 3339 bounds are inclusive and exact.
    assert_eq!(q(Some("2024-03-01T13:00:00Z"), None), vec![d, c, b]);
    assert_eq!(
        q(
            Some("2024-03-01T13:00:00+01:00"),
            Some("2024-03-01T13:00:00Z")
        ),
        vec![b, a]
    );
    assert_eq!(
        q(Some("2024-03-01T13:30"), Some("2024-03-01 14:00")),
        vec![c]
    );
    // Relative ages count back from `now` (14:30).
    assert_eq!(q(Some("1h"), None), vec![d, c]);
    assert_eq!(q(Some("2H"), None), vec![d, c, b]);
    assert_eq!(q(Some("1d"), Some("1h")), vec![b, a]);
    assert_eq!(q(Some("1w"), None).len(), 4);
    assert!(q(Some("0d"), None).contains(&d));
}

#[test]
fn invalid_arguments_say_how_to_fix_them() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    fixture(&app);
    let cases: Vec<(TimelineRequest, &str)> = vec![
        (
            TimelineRequest {
                since: Some("yesterday".into()),
                ..Default::default()
            },
            "7d",
        ),
        (
            TimelineRequest {
                until: Some("2024-13-01".into()),
                ..Default::default()
            },
            "YYYY-MM-DD",
        ),
        (
            TimelineRequest {
                since: Some("-3d".into()),
                ..Default::default()
            },
            "out of range",
        ),
        (
            TimelineRequest {
                since: Some("99999999999d".into()),
                ..Default::default()
            },
            "out of range",
        ),
        (
            TimelineRequest {
                since: Some("2024-03-02".into()),
                until: Some("2024-03-01".into()),
                ..Default::default()
            },
            "swap",
        ),
        (
            TimelineRequest {
                limit: Some(0),
                ..Default::default()
            },
            "1 to 1000",
        ),
        (
            TimelineRequest {
                limit: Some(1001),
                ..Default::default()
            },
            "1 to 1000",
        ),
        (
            TimelineRequest {
                memory_type: Some("bogus".into()),
                ..Default::default()
            },
            "session_note",
        ),
        (
            TimelineRequest {
                cursor: Some("2024-03-01T12:00:00Z".into()),
                ..Default::default()
            },
            "next_cursor",
        ),
        (
            TimelineRequest {
                cursor: Some("c12.x".into()),
                ..Default::default()
            },
            "next_cursor",
        ),
        (
            TimelineRequest {
                order: Some("sideways".into()),
                ..Default::default()
            },
            "'oldest'",
        ),
        (
            TimelineRequest {
                wing: Some("bad wing".into()),
                ..Default::default()
            },
            "wing 'bad wing'",
        ),
        (
            TimelineRequest {
                room: Some("a/b".into()),
                ..Default::default()
            },
            "room 'a/b'",
        ),
    ];
    for (req, expected) in cases {
        match timeline(&app, &Access::local(), &req) {
            Err(UseCaseError::Invalid(msg)) => {
                assert!(msg.contains(expected), "{msg} (expected {expected})")
            }
            other => panic!(
                "{req:?}: expected an invalid-input error containing {expected}, got {other:?}"
            ),
        }
    }
}

#[test]
fn cursor_pagination_is_exact_within_the_same_millisecond() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    // 25 memories created at the very same instant, 5 more a minute later (same minute as
    // nothing else): a minute-precision cursor would skip or repeat some.
    let reqs: Vec<StoreRequest> = (0..30)
        .map(|i| StoreRequest {
            // Distinct facts: values of one attribute would supersede each other (and leave
            // the timeline), as they do when stored one by one.
            content: format!("Entry {i} of the pagination check."),
            wing: "p".into(),
            memory_type: Some("fact".into()),
            created_at: Some(base() + Duration::seconds(if i < 25 { 0 } else { 60 + i })),
            ..StoreRequest::default()
        })
        .collect();
    let stored: Vec<MemoryId> = store_batch(&app, reqs)
        .into_iter()
        .map(|r| r.unwrap().id)
        .collect();
    for order in ["newest", "oldest"] {
        let mut seen = Vec::new();
        let mut cursor = None;
        let mut pages = 0;
        loop {
            let req = TimelineRequest {
                limit: Some(7),
                cursor: cursor.clone(),
                order: Some(order.into()),
                ..TimelineRequest::default()
            };
            let page = timeline(&app, &Access::local(), &req).unwrap();
            pages += 1;
            assert!(page.items.len() <= 7);
            seen.extend(page.items.iter().map(|i| i.id));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(pages, 5, "{order}");
        assert_eq!(seen.len(), 30, "{order}");
        let mut unique = seen.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 30, "{order}: a memory was repeated");
        // The order is total: (created_at, seq), and the two orders are exact reverses.
        if order == "oldest" {
            assert_eq!(seen, stored);
        } else {
            assert_eq!(seen, stored.iter().rev().copied().collect::<Vec<_>>());
        }
    }
    // A page of exactly the remaining items has no cursor.
    let all = timeline(
        &app,
        &Access::local(),
        &TimelineRequest {
            limit: Some(30),
            ..TimelineRequest::default()
        },
    )
    .unwrap();
    assert_eq!(all.items.len(), 30);
    assert!(all.next_cursor.is_none());
}

#[test]
fn archived_and_superseded_are_shown_only_when_asked_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let old = put(
        &app,
        "The API rate limit is 100 requests per minute.",
        "w",
        "fact",
        base(),
    );
    let new = store(
        &app,
        &Access::local(),
        StoreRequest {
            content: "The API rate limit is now 500 requests per minute.".into(),
            wing: "w".into(),
            memory_type: Some("fact".into()),
            created_at: Some(base() + Duration::hours(1)),
            supersedes: Some(format!("T0:{old}")),
            ..StoreRequest::default()
        },
    )
    .unwrap()
    .id;
    let note = put(
        &app,
        "We had a good discussion about the roadmap today.",
        "w",
        "session_note",
        base() + Duration::hours(2),
    );
    archive(
        &app,
        &Access::local(),
        &ArchiveRequest {
            ids: vec![note.to_string()],
            ..ArchiveRequest::default()
        },
    )
    .unwrap();
    let w = TimelineRequest {
        wing: Some("w".into()),
        ..TimelineRequest::default()
    };
    assert_eq!(ids(&app, &w), vec![new]);
    let sup = timeline(
        &app,
        &Access::local(),
        &TimelineRequest {
            include_superseded: true,
            ..w.clone()
        },
    )
    .unwrap();
    assert_eq!(
        sup.items.iter().map(|i| i.id).collect::<Vec<_>>(),
        vec![new, old]
    );
    assert_eq!(sup.items[1].superseded_by, Some(new));
    assert!(render_text(&sup).lines().any(|l| l.contains(&short_id(old))
        && l.ends_with(&format!(" [superseded by {}]", short_id(new)))));
    let arch = timeline(
        &app,
        &Access::local(),
        &TimelineRequest {
            include_archived: true,
            ..w.clone()
        },
    )
    .unwrap();
    assert_eq!(
        arch.items.iter().map(|i| i.id).collect::<Vec<_>>(),
        vec![note, new]
    );
    assert!(arch.items[0].archived && arch.items[0].memory_type == MemoryType::SessionNote);
    assert!(render_text(&arch)
        .lines()
        .any(|l| l.contains(&short_id(note)) && l.ends_with(" [archived]")));
    let both = TimelineRequest {
        include_archived: true,
        include_superseded: true,
        ..w
    };
    assert_eq!(ids(&app, &both), vec![note, new, old]);
}

#[test]
fn json_form_has_ids_times_and_the_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let [_, _, _, d] = fixture(&app);
    let out = timeline(
        &app,
        &Access::local(),
        &TimelineRequest {
            limit: Some(1),
            ..TimelineRequest::default()
        },
    )
    .unwrap();
    let v = serde_json::to_value(&out).unwrap();
    assert_eq!(v["items"][0]["id"], d.to_string());
    assert_eq!(v["items"][0]["created_at"], "2024-03-01T15:00:00.000Z");
    assert_eq!(v["items"][0]["memory_type"], "fact");
    assert_eq!(v["order"], "newest");
    assert!(v["next_cursor"]
        .as_str()
        .is_some_and(|c| c.starts_with('c')));
}
