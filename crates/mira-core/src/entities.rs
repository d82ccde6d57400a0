//! Rule-based named-entity extraction (English and French), deterministic.
//!
//! Two passes over the text:
//! 1. **Patterns**, by priority when they overlap: URLs, e-mail addresses, UUIDs, dates (ISO
//!    `2024-04-15[T10:30]`, `15/04/2024`, `15.04.2024`, "April 15, 2024", "15 avril 2024",
//!    "April 2024", quarters "Q3", "Q3 2025"), IPv4 addresses (kind `Other`), ticket ids
//!    (`ABC-123`; `UTF-8`, `GPT-4` and other standard names are technologies), versions (`v2`,
//!    `1.4.3`, "version 2.1"), hex hashes of 7 to 64 digits mixing letters and digits, and
//!    issue numbers (`#123`).
//! 2. **Words** outside those spans: multi-word gazetteer names ("New York", "Spring Boot"),
//!    gazetteer names (first names, technologies, organisations, places; a person's first name
//!    takes a following capitalised surname), all-caps acronyms of 2 to 10 characters (CTO,
//!    ACID, HTTP), other capitalised words that do not start a sentence (runs of them form one
//!    name; a run ending in Inc, Corp, Ltd, GmbH, Labs… is an organisation), weekday and
//!    month names, and words with inner capitals (pgAdmin, macOS). Names that are also common
//!    words (Go, Rust, React, Nice, Mark) count only when capitalised inside a sentence;
//!    acronyms that are words in lower case (REST, RAM, AI) only in capitals. Capitalised
//!    function words (The, We, This, Le, La, Nous…) and cue words (Reason, Approved…) are not
//!    entities; neither are shouted words next to shouted function words ("DO NOT DEPLOY").
//!
//! The result is in order of first appearance, without case-insensitive duplicates, at most
//! [`MAX_ENTITIES`] long.

use crate::memory::{Entity, EntityKind};
use crate::text::{
    extraction_prefix, is_stop_word, is_word_char, lowercase, strip_elision, word_spans, WORD_START,
};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// At most this many entities are returned (the first ones by position).
pub const MAX_ENTITIES: usize = 32;

/// Entities longer than this (in characters, e.g. huge URLs) are dropped.
const MAX_ENTITY_CHARS: usize = 120;

/// How a gazetteer name must be written to count.
#[derive(Clone, Copy)]
enum Rule {
    /// Any case ("postgres", "PostgreSQL").
    AnyCase,
    /// Capitalised, anywhere (first names).
    Capitalised,
    /// Capitalised and not the first word of a sentence (names that are also common words).
    CapitalisedInText,
    /// All capitals (acronyms that are words in lower case: REST, RAM, AI).
    AllCaps,
}

/// Technologies recognised in any case (lower case in the table, as all lookups).
#[rustfmt::skip]
const TECH_ANY_CASE: &[&str] = &[
    "postgresql", "postgres", "mysql", "mariadb", "mongodb", "redis", "sqlite", "cassandra",
    "dynamodb", "elasticsearch", "opensearch", "kafka", "rabbitmq", "memcached", "neo4j",
    "clickhouse", "bigquery", "cockroachdb", "supabase", "firebase", "kubernetes", "k8s", "docker",
    "podman", "terraform", "ansible", "jenkins", "nginx", "haproxy", "traefik", "istio", "linux",
    "ubuntu", "debian", "fedora", "macos", "ios", "android", "python", "javascript", "typescript",
    "java", "kotlin", "scala", "haskell", "erlang", "clojure", "php", "perl", "lua", "c++", "c#",
    "f#", "golang", "node.js", "nodejs", "deno", "vue.js", "next.js", "nuxt", "nestjs", "django",
    "fastapi", "laravel", "symfony", "tailwind", "jquery", "graphql", "grpc", "oauth", "oauth2",
    "openapi", "swagger", "webpack", "vite", "npm", "pnpm", "tokio", "serde", "axum", "actix",
    "git", "github", "gitlab", "bitbucket", "jira", "confluence", "figma", "grafana", "kibana",
    "datadog", "vercel", "netlify", "heroku", "cloudflare", "auth0", "okta", "keycloak", "pgadmin",
    "pgbouncer", "hadoop", "flink", "tensorflow", "pytorch", "numpy", "onnx", "chatgpt", "gpt-4",
    "gpt-4o", "llama", "sqlalchemy", "prisma", "hibernate", "gradle", "bazel", "cmake", "llvm",
    "webassembly", "wasm", "neovim", "emacs", "xcode", "intellij", "vscode", "pytest", "cypress",
    "playwright", "selenium", "redux", "rxjs", "tauri", "htmx", "websocket", "websockets", "sql",
    "nosql", "json", "yaml", "toml", "xml", "csv", "html", "css", "http", "https", "tcp", "udp",
    "dns", "tls", "ssl", "ssh", "jwt", "api", "apis", "sdk", "cli", "orm", "llm", "llms", "gpu",
    "cpu", "ssd", "cdn", "vpn", "aws", "gcp", "gcs", "azure", "s3", "ec2", "ecs", "eks", "gke",
    "aks", "rds", "sqs", "sns", "vpc", "mcp", "rpc", "smtp", "imap", "sftp", "hnsw", "nlp", "sso",
    "saml", "ldap", "rbac", "mfa", "cors", "csrf", "xss", "etl", "ttl", "lru", "fts5", "uuid",
    "utf-8", "ipv4", "ipv6", "cuda", "minilm",
];

/// Technologies whose names are also common words.
#[rustfmt::skip]
const TECH_CAPITALISED: &[&str] = &[
    "go", "rust", "react", "swift", "node", "spring", "express", "ruby", "dart", "vue", "rails",
    "cargo", "lambda", "vault", "spark", "snowflake", "bun", "elm", "crystal", "slack", "notion",
    "excel", "sentry", "envoy", "consul", "mocha", "prometheus", "pandas", "celery", "airflow",
    "bootstrap", "yarn", "helm", "jest", "flutter", "elixir", "flask", "angular", "svelte",
    "windows", "postman", "vim", "zig", "electron", "nomad", "storybook", "claude", "gemini",
    "mistral", "candle", "usearch",
];

/// Technology acronyms that are words in lower case.
const TECH_ALL_CAPS: &[&str] = &[
    "rest", "ci", "cd", "ui", "ux", "ram", "iam", "rag", "ml", "ai", "crud", "db", "sla", "slo",
    "kpi", "mvp", "poc", "ide", "vm", "os", "wal", "blob", "pr", "mr", "spa", "ssr", "pwa", "ftp",
    "bi", "erp", "crm", "cms", "gc",
];

/// Organisations recognised in any case.
#[rustfmt::skip]
const ORG_ANY_CASE: &[&str] = &[
    "google", "microsoft", "amazon", "facebook", "twitter", "netflix", "uber", "airbnb", "ibm",
    "intel", "amd", "nvidia", "salesforce", "atlassian", "mozilla", "anthropic", "openai",
    "huggingface", "alibaba", "tencent", "samsung", "sony", "tesla", "spacex", "spotify", "shopify",
    "paypal", "linkedin", "dropbox", "cisco", "ovh", "ovhcloud", "scaleway", "capgemini", "thales",
    "airbus", "renault", "sncf", "nasa", "cern", "w3c", "ietf", "deepmind", "jetbrains",
    "hashicorp", "databricks", "stackoverflow",
];

/// Organisations whose names are also common words.
const ORG_CAPITALISED: &[&str] = &[
    "apple", "meta", "oracle", "apache", "orange", "zoom", "stripe", "square", "visa", "shell",
    "total",
];

/// Organisation acronyms that are words in lower case.
const ORG_ALL_CAPS: &[&str] = &["eu", "un", "bnp", "sap", "hp", "who", "nato", "otan"];

/// Places recognised in any case.
#[rustfmt::skip]
const LOCATION_ANY_CASE: &[&str] = &[
    "paris", "london", "londres", "berlin", "madrid", "lyon", "marseille", "toulouse", "bordeaux",
    "lille", "nantes", "strasbourg", "montpellier", "rennes", "grenoble", "brussels", "bruxelles",
    "amsterdam", "dublin", "lisbon", "lisbonne", "munich", "zurich", "geneva", "genève", "vienna",
    "prague", "warsaw", "varsovie", "stockholm", "oslo", "copenhagen", "helsinki", "tokyo",
    "beijing", "pékin", "shanghai", "singapore", "singapour", "seoul", "sydney", "melbourne",
    "toronto", "montreal", "montréal", "vancouver", "boston", "chicago", "seattle", "denver",
    "atlanta", "miami", "dallas", "houston", "mumbai", "bangalore", "bengaluru", "delhi", "dubai",
    "cairo", "lagos", "nairobi", "barcelona", "barcelone", "milan", "rome", "luxembourg", "monaco",
    "france", "germany", "allemagne", "spain", "espagne", "italy", "italie", "belgium", "belgique",
    "switzerland", "suisse", "canada", "europe", "asia", "asie", "africa", "afrique", "america",
    "amérique", "china", "chine", "japan", "japon", "india", "inde", "brazil", "brésil", "mexico",
    "mexique", "australia", "australie", "netherlands", "ireland", "irlande", "portugal", "poland",
    "pologne", "sweden", "suède", "norway", "norvège", "denmark", "danemark", "finland", "finlande",
    "russia", "russie", "ukraine", "québec", "quebec", "california", "californie", "texas",
    "bretagne", "normandie", "états-unis", "royaume-uni", "île-de-france", "sweden", "kenya",
    "nigeria", "egypt", "égypte", "morocco", "maroc", "algeria", "algérie", "tunisia", "tunisie",
    "senegal", "sénégal",
];

/// Places whose names are also common words.
const LOCATION_CAPITALISED: &[&str] = &[
    "nice", "austin", "turkey", "jordan", "georgia", "chad", "cork", "bath", "reading", "split",
    "mobile", "florence",
];

/// Place acronyms that are words in lower case.
const LOCATION_ALL_CAPS: &[&str] = &["usa", "uk", "us", "uae", "nyc", "sf", "la"];

/// English and French first names (capitalised, also at a sentence start).
#[rustfmt::skip]
const PEOPLE: &[&str] = &[
    "john", "jane", "mary", "marie", "jean", "pierre", "paul", "jacques", "michel", "philippe",
    "alain", "nicolas", "julien", "thomas", "antoine", "louis", "lucas", "hugo", "léa", "chloé",
    "emma", "camille", "manon", "sarah", "sophie", "julie", "claire", "anne", "isabelle",
    "nathalie", "sylvie", "céline", "laura", "alice", "bob", "charlie", "dave", "david", "eve",
    "frank", "henry", "jack", "james", "robert", "michael", "william", "richard", "joseph",
    "charles", "daniel", "matthew", "steven", "peter", "andrew", "kevin", "brian", "george",
    "edward", "elizabeth", "emily", "olivia", "anna", "linda", "susan", "karen", "lisa", "nancy",
    "jessica", "helen", "sandra", "rachel", "caroline", "melanie", "nate", "joanna", "tim", "tom",
    "sam", "alex", "ben", "eric", "éric", "françois", "françoise", "frédéric", "hélène", "jérôme",
    "stéphane", "sébastien", "benoît", "guillaume", "mathieu", "maxime", "romain", "vincent",
    "olivier", "laurent", "christophe", "emmanuel", "patrick", "bernard", "dominique", "élodie",
    "aurélie", "émilie", "mélanie", "pauline", "marion", "lucie", "louise", "inès", "zoé", "ahmed",
    "mohamed", "fatima", "yasmine", "karim", "mehdi", "wei", "chen", "raj", "priya", "ana", "maria",
    "josé", "juan", "carlos", "luis", "diego", "sofia", "hans", "klaus", "jürgen", "lars", "sven",
    "ingrid", "yuki", "kenji", "hiroshi", "omar", "ali", "leo", "léo", "noah", "liam", "ethan",
    "mia", "ava", "nina", "oscar", "victor", "arthur", "jules", "gabriel", "raphaël", "adam",
    "nathan", "enzo", "clément", "valentin", "quentin", "bastien", "damien", "florian", "jonathan",
    "adrien", "cédric", "fabien", "franck", "gilles", "hervé", "marc", "matthieu", "rémi", "sophia",
    "chris", "mike", "joe", "dan", "steve", "jim", "anthony", "jason", "ryan", "justin", "brandon",
    "emilie", "agnès", "margaux", "théo", "tristan", "yann", "loïc", "gaël", "gaëlle", "maëlle",
    "océane",
];

/// First names that are also common words.
const PEOPLE_IN_TEXT: &[&str] = &[
    "mark", "grace", "rose", "bill", "max", "pat", "hope", "joy", "julia",
];

/// Names of two or three words (lower case, single spaces).
const MULTI_WORD: &[(&str, EntityKind)] = &[
    ("new york", EntityKind::Location),
    ("san francisco", EntityKind::Location),
    ("los angeles", EntityKind::Location),
    ("san diego", EntityKind::Location),
    ("san jose", EntityKind::Location),
    ("hong kong", EntityKind::Location),
    ("silicon valley", EntityKind::Location),
    ("united states", EntityKind::Location),
    ("united kingdom", EntityKind::Location),
    ("new zealand", EntityKind::Location),
    ("south africa", EntityKind::Location),
    ("south korea", EntityKind::Location),
    ("north america", EntityKind::Location),
    ("latin america", EntityKind::Location),
    ("las vegas", EntityKind::Location),
    ("tel aviv", EntityKind::Location),
    ("buenos aires", EntityKind::Location),
    ("rio de janeiro", EntityKind::Location),
    ("google cloud", EntityKind::Technology),
    ("google cloud platform", EntityKind::Technology),
    ("visual studio code", EntityKind::Technology),
    ("vs code", EntityKind::Technology),
    ("ruby on rails", EntityKind::Technology),
    ("spring boot", EntityKind::Technology),
    ("github actions", EntityKind::Technology),
    ("gitlab ci", EntityKind::Technology),
    ("amazon web services", EntityKind::Technology),
    ("azure devops", EntityKind::Technology),
    ("react native", EntityKind::Technology),
    ("sql server", EntityKind::Technology),
    ("cloud run", EntityKind::Technology),
    ("cloud sql", EntityKind::Technology),
    ("app engine", EntityKind::Technology),
    ("apache kafka", EntityKind::Technology),
    ("apache spark", EntityKind::Technology),
    ("docker compose", EntityKind::Technology),
    ("power bi", EntityKind::Technology),
    ("google sheets", EntityKind::Technology),
    ("google docs", EntityKind::Technology),
    ("google drive", EntityKind::Technology),
    ("microsoft teams", EntityKind::Technology),
    ("aws lambda", EntityKind::Technology),
    ("claude code", EntityKind::Technology),
    ("hugging face", EntityKind::Organization),
    ("red hat", EntityKind::Organization),
    ("linux foundation", EntityKind::Organization),
];

/// Capitalised words that are never entities on their own (lower case; stop words too).
#[rustfmt::skip]
const FUNCTION_WORDS: &[&str] = &[
    "however", "therefore", "also", "note", "notes", "update", "updated", "reason", "reasons",
    "rationale", "rejected", "approved", "validated", "assigned", "assignee", "decision", "decided",
    "deadline", "subject", "topic", "owner", "status", "todo", "fixed", "fix", "following",
    "actually", "currently", "today", "tomorrow", "yesterday", "yes", "please", "thanks", "thank",
    "hello", "hi", "hey", "ok", "okay", "first", "second", "third", "next", "last", "finally",
    "maybe", "perhaps", "every", "many", "much", "another", "one", "two", "new", "old", "let's",
    "i'm", "i've", "i'd", "i'll", "we're", "we've", "we'll", "it's", "don't", "can't", "won't",
    "there's", "that's", "what's", "here's", "also", "instead", "rather", "because", "since", "due",
    "after", "before", "meanwhile", "overall", "anyway", "suite", "désormais", "rejeté", "rejetés",
    "raison", "décision", "validé", "approuvé", "assigné", "sujet", "oui", "non", "merci",
    "bonjour", "salut", "aujourd'hui", "demain", "hier", "ensuite", "puis", "enfin", "alors",
    "cependant", "toutefois", "aussi", "selon", "depuis", "après", "avant", "pendant", "chaque",
    "tout", "tous", "toute", "toutes", "c'est", "mise", "voici", "voilà", "ainsi", "parce",
    "lorsque", "lors", "grâce", "mr", "mrs", "ms", "dr", "mme", "mlle", "m", "see", "via", "per",
    "using", "use", "step", "steps", "user", "assistant", "system", "question", "answer", "example",
    "important",
];

/// All-caps words that are not acronyms worth keeping (lower case).
#[rustfmt::skip]
const SHOUT_WORDS: &[&str] = &[
    "ok", "todo", "fixme", "xxx", "hack", "note", "nb", "fyi", "asap", "eta", "tbd", "wip", "na",
    "am", "pm", "aka", "etc", "imo", "imho", "btw", "lgtm", "ps", "re", "vs", "eg", "ie", "error",
    "warn", "warning", "info", "debug", "trace", "fatal", "important", "update", "yes", "tldr",
    "faq", "lol", "omg", "afaik", "iirc", "cc", "bcc", "ko", "id", "ids",
];

/// English weekday names (dates, also at a sentence start).
#[rustfmt::skip]
const WEEKDAYS: &[&str] = &[
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
];

/// English month names but "may" (dates when capitalised inside a sentence).
#[rustfmt::skip]
const MONTHS: &[&str] = &[
    "january", "february", "march", "april", "june", "july", "august", "september", "october",
    "november", "december",
];

/// Last words that make a run of capitalised words an organisation.
#[rustfmt::skip]
const ORG_SUFFIXES: &[&str] = &[
    "inc", "corp", "corporation", "ltd", "llc", "gmbh", "sa", "sas", "sarl", "labs", "group",
    "foundation", "university", "université", "institute", "bank", "banque",
];

/// Ticket-like prefixes that name a standard or a model, not a ticket (`UTF-8`, `GPT-4`).
const TECH_PREFIXES: &[&str] = &[
    "UTF", "SHA", "MD", "AES", "RSA", "ISO", "GPT", "IPV", "HTTP", "TLS", "ES",
];

/// The name tables, keyed by lower-case name.
struct Gazetteer {
    single: HashMap<String, (EntityKind, Rule)>,
    multi: HashMap<&'static str, EntityKind>,
}

static GAZETTEER: LazyLock<Gazetteer> = LazyLock::new(|| {
    let lists: [(&[&str], EntityKind, Rule); 12] = [
        (PEOPLE, EntityKind::Person, Rule::Capitalised),
        (PEOPLE_IN_TEXT, EntityKind::Person, Rule::CapitalisedInText),
        (TECH_ANY_CASE, EntityKind::Technology, Rule::AnyCase),
        (
            TECH_CAPITALISED,
            EntityKind::Technology,
            Rule::CapitalisedInText,
        ),
        (TECH_ALL_CAPS, EntityKind::Technology, Rule::AllCaps),
        (ORG_ANY_CASE, EntityKind::Organization, Rule::AnyCase),
        (
            ORG_CAPITALISED,
            EntityKind::Organization,
            Rule::CapitalisedInText,
        ),
        (ORG_ALL_CAPS, EntityKind::Organization, Rule::AllCaps),
        (LOCATION_ANY_CASE, EntityKind::Location, Rule::AnyCase),
        (
            LOCATION_CAPITALISED,
            EntityKind::Location,
            Rule::CapitalisedInText,
        ),
        (LOCATION_ALL_CAPS, EntityKind::Location, Rule::AllCaps),
        (WEEKDAYS, EntityKind::Date, Rule::Capitalised),
    ];
    let mut single = HashMap::new();
    for (names, kind, rule) in lists {
        for name in names {
            single.entry((*name).to_string()).or_insert((kind, rule));
        }
    }
    for month in MONTHS {
        single
            .entry((*month).to_string())
            .or_insert((EntityKind::Date, Rule::CapitalisedInText));
    }
    Gazetteer {
        single,
        multi: MULTI_WORD.iter().copied().collect(),
    }
});

/// Month names and abbreviations (English, French) for date regexes; longer names first.
pub(crate) const MONTH_NAMES: &str = "january|february|march|april|may|june|july|august|september|october|november|december|janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|sept|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec";

/// One regex for every pattern entity; the named group that matched gives the kind. The
/// alternation order is the priority at a given position.
static PATTERNS: LazyLock<Regex> = LazyLock::new(|| {
    let m = MONTH_NAMES;
    let pattern = format!(
        r"{WORD_START}(?:(?P<url>(?i:https?://|www\.)[^\s<>`{{}}|\\^\[\]]+)|(?P<email>[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{{2,}})|(?P<uuid>(?i:[0-9a-f]{{8}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}}))|(?P<date>\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}})?(?:Z|[+-]\d{{2}}:?\d{{2}})?)?|\d{{1,2}}/\d{{1,2}}/(?:\d{{4}}|\d{{2}})|\d{{1,2}}[.-]\d{{1,2}}[.-]\d{{4}}|(?i:{m})\.?\s+(?:\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?)|\d{{1,2}}(?:st|nd|rd|th|er)?\s+(?:of\s+)?(?i:{m})\.?(?:,?\s+\d{{4}})?)|(?P<quarter>Q[1-4](?:\s\d{{4}})?)|(?P<ip>\d{{1,3}}(?:\.\d{{1,3}}){{3}}(?::\d{{1,5}})?)|(?P<ticket>[A-Z][A-Z0-9]{{1,9}}-\d{{1,7}})|(?P<version>\d+\.\d+\.\d+(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?|(?i:v\d+(?:\.\d+){{0,3}}(?:-[0-9a-z]+(?:\.[0-9a-z]+)*)?))|(?i:version|release)\s+(?P<vnum>\d+(?:\.\d+)*)|(?P<hash>(?i:[0-9a-f]{{7,64}}))|(?P<issue>#\d{{1,9}}))"
    );
    Regex::new(&pattern).expect("literal regex")
});

/// The entities of `content`'s [`extraction_prefix`] (see the module docs), without those
/// shorter than `min_len` characters.
pub fn extract_entities(content: &str, min_len: usize) -> Vec<Entity> {
    let content = extraction_prefix(content);
    let mut found: Vec<(usize, Entity)> = Vec::new();
    let mut covered = vec![false; content.len()];
    pattern_entities(content, &mut covered, &mut found);
    word_entities(content, &covered, &mut found);
    found.sort_by_key(|(start, _)| *start);
    let mut seen = HashSet::new();
    found
        .into_iter()
        .map(|(_, entity)| entity)
        .filter(|e| (min_len.max(1)..=MAX_ENTITY_CHARS).contains(&e.text.chars().count()))
        .filter(|e| seen.insert(e.text.to_lowercase()))
        .take(MAX_ENTITIES)
        .collect()
}

fn pattern_entities(content: &str, covered: &mut [bool], found: &mut Vec<(usize, Entity)>) {
    const GROUPS: [(&str, EntityKind); 11] = [
        ("url", EntityKind::Url),
        ("email", EntityKind::Email),
        ("uuid", EntityKind::Id),
        ("date", EntityKind::Date),
        ("quarter", EntityKind::Date),
        ("ip", EntityKind::Other),
        ("ticket", EntityKind::Id),
        ("version", EntityKind::Version),
        ("vnum", EntityKind::Version),
        ("hash", EntityKind::Id),
        ("issue", EntityKind::Id),
    ];
    for caps in PATTERNS.captures_iter(content) {
        let Some((name, mut kind, m)) = GROUPS
            .iter()
            .find_map(|&(name, kind)| caps.name(name).map(|m| (name, kind, m)))
        else {
            continue;
        };
        let mut text = m.as_str();
        if name == "url" {
            text = trim_url(text);
        } else if content[m.end()..].chars().next().is_some_and(is_word_char) {
            continue;
        }
        match name {
            "hash"
                if !(text.contains(|c: char| c.is_ascii_digit())
                    && text.contains(|c: char| c.is_ascii_alphabetic())) =>
            {
                continue
            }
            "ticket"
                if text
                    .split('-')
                    .next()
                    .is_some_and(|p| TECH_PREFIXES.contains(&p)) =>
            {
                kind = EntityKind::Technology;
            }
            _ => {}
        }
        let end = m.start() + text.len();
        covered[m.start()..end].fill(true);
        found.push((
            m.start(),
            Entity {
                text: text.to_string(),
                kind,
            },
        ));
    }
}

/// A URL without the sentence punctuation that follows it.
fn trim_url(url: &str) -> &str {
    let mut url = url;
    loop {
        let trimmed = url.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '"']);
        let trimmed = if trimmed.ends_with(')')
            && trimmed.matches('(').count() < trimmed.matches(')').count()
        {
            &trimmed[..trimmed.len() - 1]
        } else {
            trimmed
        };
        if trimmed.len() == url.len() {
            return url;
        }
        url = trimmed;
    }
}

/// A word token with its context.
struct Word<'a> {
    /// Byte offset of the word's core (after an elided prefix) in the content.
    start: usize,
    /// The core: no elided prefix ("l'"), no possessive suffix ("'s").
    core: &'a str,
    /// Whether the word starts a sentence, a line or a clause after a colon.
    sentence_start: bool,
    /// Whether a single space separates the word from the previous one.
    joined: bool,
    /// Whether part of the word is already taken by a pattern entity.
    covered: bool,
}

impl Word<'_> {
    fn end(&self) -> usize {
        self.start + self.core.len()
    }
}

fn split_words<'a>(content: &'a str, covered: &[bool]) -> Vec<Word<'a>> {
    let mut words = Vec::new();
    let mut prev_end = None;
    for (start, raw) in word_spans(content) {
        let end = start + raw.len();
        let gap = prev_end.map(|p| &content[p..start]);
        let sentence_start = gap.is_none_or(gap_ends_sentence);
        let joined = gap == Some(" ");
        prev_end = Some(end);
        let without_elision = strip_elision(raw);
        let core = without_elision
            .strip_suffix("'s")
            .or_else(|| without_elision.strip_suffix("’s"))
            .unwrap_or(without_elision);
        if core.is_empty() {
            continue;
        }
        let core_start = start + (raw.len() - without_elision.len());
        words.push(Word {
            start: core_start,
            core,
            sentence_start,
            joined,
            covered: covered[start..end].iter().any(|&c| c),
        });
    }
    words
}

/// Whether the text between two words ends a sentence: a line break, or `.!?:;…` followed by
/// whitespace.
fn gap_ends_sentence(gap: &str) -> bool {
    let mut chars = gap.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' || c == '\r' {
            return true;
        }
        if matches!(c, '.' | '!' | '?' | ':' | ';' | '…')
            && chars.peek().is_some_and(|n| n.is_whitespace())
        {
            return true;
        }
    }
    false
}

fn starts_upper(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// All letters upper case, at least two of them, at most 10 characters, starting with a letter.
fn is_all_caps(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_alphabetic)
        && word.chars().count() <= 10
        && word.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && !word.chars().any(char::is_lowercase)
}

static FUNCTION_WORD_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| FUNCTION_WORDS.iter().copied().collect());

fn is_function_word(lower: &str) -> bool {
    is_stop_word(lower) || FUNCTION_WORD_SET.contains(lower)
}

fn gazetteer_kind(word: &Word<'_>, lower: &str) -> Option<EntityKind> {
    let &(kind, rule) = GAZETTEER.single.get(lower)?;
    let ok = match rule {
        Rule::AnyCase => true,
        Rule::Capitalised => starts_upper(word.core),
        Rule::CapitalisedInText => {
            starts_upper(word.core) && !word.sentence_start && !is_all_caps(word.core)
        }
        Rule::AllCaps => is_all_caps(word.core),
    };
    ok.then_some(kind)
}

/// A capitalised word that may continue a name: not known, not a function word, not shouted.
fn is_name_part(word: &Word<'_>) -> bool {
    if word.covered || !word.joined || !starts_upper(word.core) || is_all_caps(word.core) {
        return false;
    }
    let lower = word.core.to_lowercase();
    !GAZETTEER.single.contains_key(&lower) && !is_function_word(&lower)
}

fn word_entities(content: &str, covered: &[bool], found: &mut Vec<(usize, Entity)>) {
    let words = split_words(content, covered);
    let mut i = 0;
    while i < words.len() {
        let (consumed, entity) = word_entity(content, &words, i);
        if let Some((end, kind)) = entity {
            let start = words[i].start;
            found.push((
                start,
                Entity {
                    text: content[start..end].to_string(),
                    kind,
                },
            ));
        }
        i += consumed;
    }
}

/// How many words the entity at `words[i]` spans (at least 1) and, when there is one, its end
/// byte and kind.
type WordEntity = (usize, Option<(usize, EntityKind)>);

/// The entity that starts at `words[i]`, if any (see [`WordEntity`]).
fn word_entity(content: &str, words: &[Word<'_>], i: usize) -> WordEntity {
    let word = &words[i];
    if word.covered || word.core.starts_with(|c: char| c.is_ascii_digit()) {
        return (1, None);
    }
    if starts_upper(word.core) {
        for n in [3, 2] {
            let Some(run) = words.get(i..i + n) else {
                continue;
            };
            if run[1..].iter().all(|w| w.joined && !w.covered) {
                let key = content[word.start..run[n - 1].end()].to_lowercase();
                if let Some(&kind) = GAZETTEER.multi.get(key.as_str()) {
                    return (n, Some((run[n - 1].end(), kind)));
                }
            }
        }
    }
    let lower = lowercase(word.core);
    // "ACID-compliant", "Kubernetes-based": the name is the part before the hyphen.
    if let Some((head, tail)) = word.core.split_once('-') {
        if !GAZETTEER.single.contains_key(lower.as_ref()) && tail.starts_with(char::is_lowercase) {
            let head_word = Word {
                core: head,
                ..*word
            };
            let kind = single_word_entity(&head_word, &lowercase(head), words, i).1;
            return (1, kind.map(|(_, kind)| (head_word.end(), kind)));
        }
    }
    single_word_entity(word, &lower, words, i)
}

/// The entity that the single word `word` (`words[i]` or its head) starts, if any.
fn single_word_entity(word: &Word<'_>, lower: &str, words: &[Word<'_>], i: usize) -> WordEntity {
    let spanning = |span: usize, kind| (span, Some((words[i + span - 1].end(), kind)));
    if let Some(kind) = gazetteer_kind(word, lower) {
        // A first name takes the capitalised surname that follows it.
        let surname = kind == EntityKind::Person && words.get(i + 1).is_some_and(is_name_part);
        return spanning(1 + usize::from(surname), kind);
    }
    if is_all_caps(word.core) {
        let shouted = |w: Option<&Word<'_>>| {
            w.is_some_and(|w| is_all_caps(w.core) && is_function_word(&w.core.to_lowercase()))
        };
        let next = words.get(i + 1).filter(|w| w.joined);
        let prev = i
            .checked_sub(1)
            .and_then(|p| words.get(p))
            .filter(|_| word.joined);
        let keep = !is_function_word(lower)
            && !SHOUT_WORDS.contains(&lower)
            && !shouted(next)
            && !shouted(prev);
        return if keep {
            spanning(1, EntityKind::Other)
        } else {
            (1, None)
        };
    }
    let mut chars = word.core.chars();
    let first = chars.next().unwrap_or(' ');
    if first.is_lowercase() {
        // Inner capitals: pgAdmin-like product names and identifiers.
        let inner_caps = word.core.chars().count() >= 3 && chars.any(char::is_uppercase);
        return if inner_caps {
            spanning(1, EntityKind::Other)
        } else {
            (1, None)
        };
    }
    if !first.is_uppercase() || word.sentence_start || is_function_word(lower) {
        return (1, None);
    }
    let mut span = 1;
    while span < 4 && words.get(i + span).is_some_and(is_name_part) {
        span += 1;
    }
    let last = words[i + span - 1].core.to_lowercase();
    let kind = if span > 1 && ORG_SUFFIXES.contains(&last.as_str()) {
        EntityKind::Organization
    } else {
        EntityKind::Other
    };
    spanning(span, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use EntityKind::*;

    fn pairs(content: &str) -> Vec<(String, EntityKind)> {
        extract_entities(content, 2)
            .into_iter()
            .map(|e| (e.text, e.kind))
            .collect()
    }

    fn texts(content: &str) -> Vec<String> {
        extract_entities(content, 2)
            .into_iter()
            .map(|e| e.text)
            .collect()
    }

    #[test]
    fn seed_entities_in_order() {
        let seed = "We decided to migrate to PostgreSQL for v2. Rejected: MySQL (not ACID), \
                    MongoDB (not relational). Reason: ACID and team expertise. Approved by CTO. \
                    Assigned to Jean.";
        assert_eq!(
            pairs(seed),
            vec![
                ("PostgreSQL".into(), Technology),
                ("v2".into(), Version),
                ("MySQL".into(), Technology),
                ("ACID".into(), Other),
                ("MongoDB".into(), Technology),
                ("CTO".into(), Other),
                ("Jean".into(), Person),
            ]
        );
    }

    #[test]
    fn function_words_and_sentence_starts_are_not_entities() {
        assert!(texts("The team met. We talked. This is fine. Le code. Nous partons.").is_empty());
        assert_eq!(
            texts("We met Dupont and then Jean Dupont in Paris."),
            vec!["Dupont", "Jean Dupont", "Paris"]
        );
        assert_eq!(
            texts("Ask the Platform Team about it."),
            vec!["Platform Team"]
        );
    }

    #[test]
    fn non_ascii_capitals_work() {
        assert_eq!(
            pairs("Validé par Éric hier."),
            vec![("Éric".into(), Person)]
        );
        assert_eq!(
            pairs("Nous allons à Montréal avec Hélène."),
            vec![("Montréal".into(), Location), ("Hélène".into(), Person)]
        );
    }

    #[test]
    fn ambiguous_names_need_capitals_inside_a_sentence() {
        assert_eq!(
            texts("I prefer using Go over Python for this service."),
            vec!["Go", "Python"]
        );
        assert!(texts("Go to the page and react quickly.").is_empty());
        assert_eq!(
            texts("We use REST and Redis; the rest is redis-like."),
            vec!["REST", "Redis"]
        );
        assert_eq!(texts("we store it in postgres"), vec!["postgres"]);
    }

    #[test]
    fn acronyms_and_all_caps_technologies() {
        assert_eq!(
            pairs("Deployed on AWS and GCP with SQL over HTTP; the CTO agreed."),
            vec![
                ("AWS".into(), Technology),
                ("GCP".into(), Technology),
                ("SQL".into(), Technology),
                ("HTTP".into(), Technology),
                ("CTO".into(), Other),
            ]
        );
        assert!(texts("PLEASE DO NOT DEPLOY today").is_empty());
        assert_eq!(
            texts("It is ACID-compliant and Kubernetes-based."),
            vec!["ACID", "Kubernetes"]
        );
    }

    #[test]
    fn patterns() {
        let text =
            "See https://example.com/a?b=1. Mail jean.dupont@acme.fr about ABC-123 and #42, \
                    commit 3f2a9c1d, id 550e8400-e29b-41d4-a716-446655440000, v1.4.3 and 2.0.1, \
                    host 10.0.0.5:8080, UTF-8.";
        assert_eq!(
            pairs(text),
            vec![
                ("https://example.com/a?b=1".into(), Url),
                ("jean.dupont@acme.fr".into(), Email),
                ("ABC-123".into(), Id),
                ("#42".into(), Id),
                ("3f2a9c1d".into(), Id),
                ("550e8400-e29b-41d4-a716-446655440000".into(), Id),
                ("v1.4.3".into(), Version),
                ("2.0.1".into(), Version),
                ("10.0.0.5:8080".into(), Other),
                ("UTF-8".into(), Technology),
            ]
        );
        assert_eq!(
            pairs("Released as version 2.1 today"),
            vec![("2.1".into(), Version)]
        );
        assert_eq!(
            pairs("v1 v2 v3"),
            vec![
                ("v1".into(), Version),
                ("v2".into(), Version),
                ("v3".into(), Version)
            ]
        );
        assert!(texts("the deadbeef cafe and 1234567").is_empty());
    }

    #[test]
    fn dates() {
        let text = "Due 2024-04-15, or 15/04/2024, or April 15, 2024, or 15 avril 2024, or \
                    le 3 mars, or March 2025, on Friday.";
        assert_eq!(
            texts(text),
            vec![
                "2024-04-15",
                "15/04/2024",
                "April 15, 2024",
                "15 avril 2024",
                "3 mars",
                "March 2025",
                "Friday"
            ]
        );
        assert!(extract_entities(text, 2).iter().all(|e| e.kind == Date));
    }

    #[test]
    fn multi_word_names() {
        assert_eq!(
            pairs("They moved from New York to San Francisco and use Spring Boot."),
            vec![
                ("New York".into(), Location),
                ("San Francisco".into(), Location),
                ("Spring Boot".into(), Technology),
            ]
        );
        assert_eq!(
            pairs("We signed with Acme Labs."),
            vec![("Acme Labs".into(), Organization)]
        );
    }

    #[test]
    fn dedup_min_len_and_elision() {
        assert_eq!(texts("Redis, then redis again, then REDIS."), vec!["Redis"]);
        assert_eq!(
            texts("l'API de Google et l'équipe d'Alice"),
            vec!["API", "Google", "Alice"]
        );
        assert_eq!(texts("Jean's laptop"), vec!["Jean"]);
        assert_eq!(extract_entities("Use Go and AWS", 3).len(), 1);
        assert!(extract_entities("", 2).is_empty());
    }

    #[test]
    fn output_is_capped() {
        let text: String = (0..100).map(|i| format!("ticket ABC-{i} ")).collect();
        assert_eq!(extract_entities(&text, 2).len(), MAX_ENTITIES);
    }
}
