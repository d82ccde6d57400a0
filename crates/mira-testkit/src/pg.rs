//! The PostgreSQL server of the tests: the one
//! `MIRA_TEST_POSTGRES_URL` names, else the one `scripts/postgres.sh start` starts (once per
//! test binary). Each test gets a database of its own, dropped when it ends. Tests that need
//! PostgreSQL skip, saying why, only when no server can be had, and never under CI
//! ([`under_ci`]): there a missing server fails them.

use crate::under_ci;
use std::sync::OnceLock;

/// The server's URL (its maintenance database), or `None` with the reason printed once.
pub fn server_url() -> Option<&'static str> {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    let url = URL.get_or_init(|| {
        if let Ok(url) = std::env::var("MIRA_TEST_POSTGRES_URL") {
            return Ok(url);
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/postgres.sh");
        let out = std::process::Command::new("bash")
            .arg(script)
            .arg("start")
            .output()
            .map_err(|e| format!("cannot run {script}: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        match stdout.lines().last() {
            Some(url) if out.status.success() && url.starts_with("postgres://") => {
                Ok(url.to_owned())
            }
            _ => Err(format!(
                "{script} start failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        }
    });
    match url {
        Ok(url) => Some(url),
        Err(reason) => {
            assert!(
                !under_ci(),
                "PostgreSQL is required under CI and none could be started ({reason}); .ci/run starts it with scripts/postgres.sh"
            );
            static SAID: OnceLock<()> = OnceLock::new();
            SAID.get_or_init(|| {
                eprintln!("PostgreSQL tests skipped: no PostgreSQL could be started ({reason})");
            });
            None
        }
    }
}

/// A database of its own for one test, dropped (with its connections) when this is dropped.
pub struct TestDatabase {
    /// Its URL.
    pub url: String,
    admin: String,
    name: String,
}

impl TestDatabase {
    /// A new empty database on the test server; `None` (the reason printed) without a server.
    pub fn create() -> Option<TestDatabase> {
        let admin = server_url()?.to_owned();
        let name = format!("mira_test_{}", uuid::Uuid::new_v4().simple());
        let server = mira_store::PgOptions {
            url: admin.clone(),
            ..mira_store::PgOptions::default()
        };
        mira_store::PgStore::recreate_database(&server, &name)
            .unwrap_or_else(|e| panic!("cannot create a test database on {admin}: {e}"));
        Some(TestDatabase {
            url: server
                .on_database(&name)
                .unwrap_or_else(|e| panic!("the test server's URL {admin} names no database: {e}"))
                .url,
            admin,
            name,
        })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let server = mira_store::PgOptions {
            url: self.admin.clone(),
            ..mira_store::PgOptions::default()
        };
        let _ = mira_store::PgStore::drop_database(&server, &self.name);
    }
}
