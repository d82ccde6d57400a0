//! Slots: what a memory asserts about whom, by rules, so that a later memory giving a different
//! value for the same slot supersedes it ("I live in Paris" → "I moved to Berlin last month").
//!
//! A [`Slot`] is a subject, an attribute and a value. Subjects: the speaker or the wing's user
//! for "I"/"my" (the speaker prefix of `Name: …` when there is one), "we" for the team, a
//! person's name, or a thing ("the billing database", "the weekly meeting"). Attributes, in
//! English:
//!
//! | attribute | shapes |
//! |---|---|
//! | `location` | I/we/Name live(s) in, moved to, relocated to, am/is based in, settled in *Place* |
//! | `phone`, `email` | my/Name's (new) (phone) number / email (address) is *value* |
//! | `employer` | I/Name work(s) at/for, joined, started at *Org* |
//! | `lead` | *Name* leads/heads/runs/manages/owns the *team*; *Name* is the lead/owner/manager/head of the *team* |
//! | `tool` | we/our … use(s), are using, run on, switched/moved/migrated to *Tool* for (the) *purpose* |
//! | `time` | the *event* (meeting, call, demo, release, deadline …) is (moved to / now) on/at *day or time* |
//! | `favourite` | my (new) favourite *thing* is *value* |
//! | `value` | the *thing* limit/price/timeout/size/count/quota/version/port/rate is (now) *number* |
//!
//! "from *X* to *Y*" also names the value replaced (`replaces`), and "*Name* no longer
//! leads/uses/lives …" asserts a value negated. Questions assert nothing. [`supersedes`] says
//! whether a new memory's slots replace an earlier one's.

use crate::rank::speaker;
use crate::text::in_question;
use regex::{Captures, Regex};
use std::sync::LazyLock;

/// One thing a memory asserts: `subject`'s `attribute` is `value` (all normalised: lower case,
/// single spaces, no leading article).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// Whom or what it is about.
    pub subject: String,
    /// What about it (`location`, `phone`, `tool`, …).
    pub attribute: String,
    /// The value asserted (empty when only `replaces` is known).
    pub value: String,
    /// The value it replaces, when the text names it ("from MySQL to PostgreSQL").
    pub replaces: Option<String>,
    /// Whether the value is denied ("Bob no longer leads the team").
    pub negated: bool,
}

impl Slot {
    /// The key under which slots of the same subject and attribute meet: `subject|attribute`.
    pub fn key(&self) -> String {
        format!("{}|{}", self.subject, self.attribute)
    }
}

const NAME: &str = r"(?-i:\p{Lu}[\p{L}'’-]*)";
const PLACE: &str = r"(?-i:\p{Lu}[\p{L}.'’-]*)(?:\s+(?-i:\p{Lu}[\p{L}.'’-]*)){0,2}";
const DAY: &str = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|today|tonight|next week|\d{1,2}(?::\d{2})?\s*(?:am|pm)?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\s+\d{1,2})";

/// One extraction rule: the attribute it asserts and its regex (captures `subj`, `val`, and
/// optionally `who` (the person, for `lead`), `what` (a tool's purpose, a favourite's thing),
/// `from` (the value replaced) and `neg` (a denial)).
struct Rule {
    attribute: &'static str,
    re: Regex,
}

fn rule(attribute: &'static str, pattern: &str) -> Rule {
    Rule {
        attribute,
        re: Regex::new(&format!("(?i){pattern}")).expect("literal regex"),
    }
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let subj = format!(r"(?P<subj>I|we|he|she|they|{NAME})");
    vec![
        rule(
            "location",
            &format!(
                r"{subj}\s+(?:(?:now|still|also)\s+)?(?P<neg>no longer\s+|don't\s+|do not\s+|doesn't\s+)?(?:live|lives|living|am living|is living|are living|moved|have moved|has moved|relocated|am based|is based|are based|settled)\s+(?:back\s+)?(?:from\s+(?P<from>{PLACE})\s+)?(?:in|to)\s+(?P<val>{PLACE})"
            ),
        ),
        rule(
            "phone",
            &format!(
                r"(?P<subj>my|our|{NAME}'s)\s+(?:new\s+)?(?:phone\s+|mobile\s+|cell\s+)?(?:number|phone)\s+is\s+(?:now\s+)?(?P<val>\+?\d[\d\s().-]{{4,}}\d)"
            ),
        ),
        rule(
            "email",
            &format!(
                r"(?P<subj>my|our|{NAME}'s)\s+(?:new\s+)?e-?mail(?:\s+address)?\s+is\s+(?:now\s+)?(?P<val>[^\s@]+@[^\s,;]+[^\s,;.])"
            ),
        ),
        rule(
            "employer",
            &format!(
                r"{subj}\s+(?:(?:now|still)\s+)?(?P<neg>no longer\s+|don't\s+|doesn't\s+)?(?:work|works|am working|is working|joined|started at|started working at|started working for)\s+(?:at\s+|for\s+)?(?P<val>{PLACE})"
            ),
        ),
        rule(
            "lead",
            &format!(
                r"(?P<who>{NAME})\s+(?:now\s+)?(?P<neg>no longer\s+)?(?:leads|heads|runs|manages|owns|is the (?:new\s+)?(?:lead|owner|manager|head) of|is in charge of)\s+(?P<subj>the\s+[\w\s-]{{2,30}}?)(?:\s+(?:team|group|project))?(?:[.,;]|\s+(?:now|from|since|starting)\b|$)"
            ),
        ),
        rule(
            "tool",
            &format!(
                r"(?P<subj>we|our\s+\w+)\s+(?:(?:now|still|also)\s+)?(?P<neg>no longer\s+|don't\s+|do not\s+)?(?:use|uses|are using|run on|runs on|switched to|moved to|migrated to|are moving to|went with|chose)\s+(?:(?P<from>{PLACE})\s+to\s+)?(?P<val>{PLACE})\s+for\s+(?:the\s+|our\s+)?(?P<what>[\w\s-]{{2,30}}?)(?:[.,;]|\s+(?:after|now|because|since|instead)\b|$)"
            ),
        ),
        rule(
            "tool",
            &format!(
                r"(?P<subj>we|our\s+\w+)\s+(?:(?:have|had)\s+)?(?:switched|moved|migrated)\s+(?:our\s+[\w\s-]{{2,30}}?\s+)?from\s+(?P<from>{PLACE})\s+to\s+(?P<val>{PLACE})"
            ),
        ),
        rule(
            "time",
            &format!(
                r"(?P<subj>(?:the|our)\s+(?:[\w-]+\s+){{0,2}}?(?:meeting|standup|stand-up|call|review|demo|retro|retrospective|sync|launch|release|deadline|interview|appointment|party|dinner|workshop|offsite))\s+(?:is|will be|has been moved|was moved|moved|is now|was rescheduled|has been rescheduled|got moved)\s+(?:now\s+)?(?:to\s+|on\s+|at\s+|for\s+)?(?:on\s+|at\s+)?(?P<val>{DAY}(?:\s+at\s+\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm)?)?)"
            ),
        ),
        rule(
            "favourite",
            r"(?P<subj>my)\s+(?:new\s+)?favou?rite\s+(?P<what>[\w\s]{2,20}?)\s+is\s+(?:now\s+)?(?P<val>[^.,;!?]{2,40})",
        ),
        rule(
            "value",
            r"(?P<subj>(?:the|our)\s+(?:[\w-]+\s+){0,3}?(?:limit|price|cost|timeout|size|count|quota|budget|version|port|rate|ttl))\s+(?:is|is now|was raised to|was lowered to|was changed to|has changed to|changed to|increased to|went up to|went down to|reduced to|=)\s+(?:now\s+)?(?:set\s+to\s+)?(?P<val>[$€£]?\d[\w.,:/%$€£-]*)",
        ),
    ]
});

/// Lower case, single spaces, without a leading article or possessive.
fn normalise(s: &str) -> String {
    let lower = s.trim().to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let skip = usize::from(matches!(
        words.first(),
        Some(&("the" | "our" | "a" | "an" | "my"))
    ));
    words[skip.min(words.len())..]
        .join(" ")
        .trim_end_matches(['.', ',', ';', ':'])
        .to_string()
}

/// The subject as a slot names it: "I"/"my" is the speaker (or "i"), possessives lose "'s".
fn subject(raw: &str, speaker: Option<&str>) -> String {
    let s = normalise(raw);
    let s = s
        .strip_suffix("'s")
        .or_else(|| s.strip_suffix("’s"))
        .unwrap_or(&s);
    match s {
        "i" | "my" | "" => speaker.unwrap_or("i").to_string(),
        "our" | "we" => "we".to_string(),
        other => other.to_string(),
    }
}

fn slot_of(rule: &Rule, c: &Captures<'_>, speaker: Option<&str>) -> Option<Slot> {
    let text = |name: &str| c.name(name).map(|m| m.as_str());
    let subj = subject(text("subj")?, speaker);
    let (subject, attribute, value) = match rule.attribute {
        "lead" => (subj, "lead".to_string(), normalise(text("who")?)),
        "favourite" => (
            subj,
            format!("favourite {}", normalise(text("what")?)),
            normalise(text("val")?),
        ),
        "tool" => (
            text("what").map_or(subj, normalise),
            "tool".to_string(),
            normalise(text("val")?),
        ),
        other => (subj, other.to_string(), normalise(text("val")?)),
    };
    Some(Slot {
        subject,
        attribute,
        value,
        replaces: text("from").map(normalise),
        negated: text("neg").is_some(),
    })
}

/// The slots `content` asserts, in text order (questions left out).
pub fn slots(content: &str) -> Vec<Slot> {
    let speaker = speaker(content);
    let mut out: Vec<(usize, Slot)> = Vec::new();
    for rule in RULES.iter() {
        for c in rule.re.captures_iter(content) {
            let Some(m) = c.get(0) else { continue };
            if in_question(content, m.start()) {
                continue;
            }
            if let Some(slot) = slot_of(rule, &c, speaker.as_deref()) {
                if !out.iter().any(|(_, s)| *s == slot) {
                    out.push((m.start(), slot));
                }
            }
        }
    }
    out.sort_by_key(|(at, _)| *at);
    out.into_iter().map(|(_, s)| s).collect()
}

/// Whether a memory asserting `new` supersedes one asserting `old`: for the same subject and
/// attribute, a different value, or the old value named as replaced or denied. A slot that
/// names only what it replaces (a switch without a purpose) matches any subject holding that
/// value for the attribute.
pub fn supersedes(new: &[Slot], old: &[Slot]) -> bool {
    replaced(new, old).is_some()
}

/// The first pair (new slot, old slot) by which `new` supersedes `old` ([`supersedes`]).
pub fn replaced<'a>(new: &'a [Slot], old: &'a [Slot]) -> Option<(&'a Slot, &'a Slot)> {
    new.iter()
        .find_map(|n| old.iter().find(|o| replaces(n, o)).map(|o| (n, o)))
}

fn replaces(n: &Slot, o: &Slot) -> bool {
    if o.negated || o.attribute != n.attribute {
        return false;
    }
    let named =
        n.replaces.as_deref() == Some(o.value.as_str()) || (n.negated && n.value == o.value);
    let same_subject = n.subject == o.subject;
    (same_subject && (named || (!n.negated && n.value != o.value)))
        || (named && n.attribute == "tool")
}

/// How `new` replaced `old`, in words ("location of i: paris → berlin"), when slots did.
pub fn explain(new: &[Slot], old: &[Slot]) -> Option<String> {
    replaced(new, old).map(|(n, o)| {
        let to = if n.negated {
            "no longer".to_string()
        } else {
            n.value.clone()
        };
        format!("{} of {}: {} → {to}", o.attribute, o.subject, o.value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Slot {
        let s = slots(text);
        assert_eq!(s.len(), 1, "{text}: {s:?}");
        s[0].clone()
    }

    #[test]
    fn each_attribute() {
        let s = one("I moved to Berlin last month.");
        assert_eq!(
            (s.subject.as_str(), s.attribute.as_str(), s.value.as_str()),
            ("i", "location", "berlin")
        );
        assert_eq!(one("Caroline: I live in Paris.").subject, "caroline");
        assert_eq!(
            one("My new number is +49 170 1234567.").value,
            "+49 170 1234567"
        );
        assert!(one("Bob no longer leads the platform team.").negated);
        let t = one("We use MySQL for the billing database.");
        assert_eq!(
            (t.subject.as_str(), t.value.as_str()),
            ("billing database", "mysql")
        );
        let sw = one("We switched from MySQL to PostgreSQL after all.");
        assert_eq!(
            (sw.value.as_str(), sw.replaces.as_deref()),
            ("postgresql", Some("mysql"))
        );
        assert_eq!(
            one("Actually the weekly meeting is on Thursday.").value,
            "thursday"
        );
        assert_eq!(
            one("The API rate limit is now 500 requests per minute.").value,
            "500"
        );
        assert_eq!(
            one("My favourite editor is Helix.").attribute,
            "favourite editor"
        );
        assert!(slots("Do we still use MySQL for billing?").is_empty());
    }

    #[test]
    fn what_supersedes_what() {
        let paris = slots("Alice lives in Paris.");
        assert!(supersedes(&slots("Alice moved to Lyon."), &paris));
        assert!(!supersedes(&slots("Bob lives in Berlin."), &paris));
        assert!(!supersedes(&slots("Alice lives in Paris."), &paris));
        let mysql = slots("We use MySQL for the billing database.");
        assert!(supersedes(
            &slots("We switched from MySQL to PostgreSQL."),
            &mysql
        ));
        assert!(!supersedes(
            &slots("We use Redis for the session cache."),
            &mysql
        ));
    }
}
