use std::time::Instant;
const PARAGRAPH: &str = "Following the incident review, the platform team decided to move the \
    session store from Memcached to Redis 7.2 because the eviction policy kept dropping logins. \
    The connection pool max is 100 connections and the timeout is 30s. Jean will take care of \
    the rollout by April 15, 2024; the CTO approved it. See https://wiki.example.com/redis and \
    OPS-1234. Nous avons aussi décidé d'utiliser PostgreSQL plutôt que MySQL, car l'équipe le \
    connaît bien. ";
fn t<F: FnMut() -> usize>(name: &str, n: usize, mut f: F) {
    let start = Instant::now();
    let mut x = 0;
    for _ in 0..n { x += f(); }
    println!("{name:>20}: {:>9.1} µs ({x})", start.elapsed().as_secs_f64() * 1e6 / n as f64);
}
fn main() {
    let text = PARAGRAPH.repeat(10 * 1024 / PARAGRAPH.len());
    let big = PARAGRAPH.repeat(64 * 1024 / PARAGRAPH.len());
    let mut x: u32 = 12345;
    let mut rnd = String::new();
    while rnd.len() < 65000 { x = x.wrapping_mul(1103515245).wrapping_add(12345); rnd.push(char::from_u32(0x20 + (x >> 8) % 0x3000).unwrap_or(' ')); }
    let short = "We decided to migrate to PostgreSQL for v2. Rejected: MySQL (not ACID), MongoDB (not relational). Reason: ACID and team expertise. Approved by CTO. Assigned to Jean.";
    for (label, s) in [("short", short), ("10k", text.as_str()), ("64k", big.as_str()), ("64k random", rnd.as_str())] {
        println!("== {label} ({} bytes)", s.len());
        let n = if s.len() < 1000 { 2000 } else { 30 };
        t("classify", n, || mira_core::classify::classify(s) as usize);
        t("entities", n, || mira_core::entities::extract_entities(s, 2).len());
        t("extract", n, || mira_core::fingerprint::extract(s, mira_core::MemoryType::Decision, 2).subjects.len());
        let fp = mira_core::fingerprint::extract(s, mira_core::MemoryType::Decision, 2);
        t("tags", n, || mira_core::tags::extract_tags(s, &fp).len());
        t("cues", n, || mira_core::causal::detect_cues(s).len());
        t("keywords", n, || mira_core::text::keywords(s, 5).len());
        t("word_spans", n, || mira_core::text::word_spans(s).count());
    }
}
