const PARAGRAPH: &str = "Following the incident review, the platform team decided to move the \
    session store from Memcached to Redis 7.2 because the eviction policy kept dropping logins. \
    The connection pool max is 100 connections and the timeout is 30s. Jean will take care of \
    the rollout by April 15, 2024; the CTO approved it. See https://wiki.example.com/redis and \
    OPS-1234. Nous avons aussi décidé d'utiliser PostgreSQL plutôt que MySQL, car l'équipe le \
    connaît bien. ";
fn main() {
    let big = PARAGRAPH.repeat(10 * 1024 / PARAGRAPH.len());
    let mut n = 0;
    for _ in 0..600 {
        n += mira_core::fingerprint::extract(&big, mira_core::MemoryType::Decision, 2).subjects.len();
    }
    println!("{n}");
}
