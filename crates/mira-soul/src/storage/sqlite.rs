//! SOUL's tables in mira's SQLite file (STRICT tables; observations ordered by `rowid` among
//! equal times).

use super::{ObservationRecord, Overview, SoulStore, Swap, SCHEMA_VERSION};
use crate::model::Identity;
use crate::SoulError;
use rusqlite::{params, Connection, OptionalExtension};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS soul_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS soul_identities (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    version     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    parent_id   TEXT,
    model_id    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    confidence  REAL NOT NULL,
    data        TEXT NOT NULL,
    UNIQUE (agent_id, version)
) STRICT;
CREATE TABLE IF NOT EXISTS soul_observations (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    model_id    TEXT NOT NULL,
    session_id  TEXT,
    identity_id TEXT,
    observed_at INTEGER NOT NULL,
    data        TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS idx_soul_observations_agent_model
    ON soul_observations (agent_id, model_id, observed_at);
CREATE TABLE IF NOT EXISTS soul_model_swaps (
    id          INTEGER PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    from_model  TEXT NOT NULL,
    to_model    TEXT NOT NULL,
    swapped_at  INTEGER NOT NULL,
    identity_id TEXT,
    reinforced  INTEGER NOT NULL,
    drift       REAL
) STRICT;
CREATE INDEX IF NOT EXISTS idx_soul_swaps_agent ON soul_model_swaps (agent_id, swapped_at);
";

/// SOUL's storage on a SQLite connection (or transaction: it derefs to one).
#[derive(Debug, Clone, Copy)]
pub struct SqliteSoul<'a> {
    conn: &'a Connection,
}

impl<'a> SqliteSoul<'a> {
    /// SOUL's tables through `conn`.
    pub fn new(conn: &'a Connection) -> SqliteSoul<'a> {
        SqliteSoul { conn }
    }

    fn strings(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<String>, SoulError> {
        let mut stmt = self.conn.prepare(sql)?;
        let rows = stmt.query_map(params, |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl SoulStore for SqliteSoul<'_> {
    fn recorded_version(&mut self) -> Result<Option<String>, SoulError> {
        let exists: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'soul_meta')",
            [],
            |r| r.get(0),
        )?;
        if !exists {
            return Ok(None);
        }
        Ok(self
            .conn
            .query_row(
                "SELECT value FROM soul_meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    fn create_schema(&mut self) -> Result<(), SoulError> {
        self.conn.execute_batch(SCHEMA)?;
        self.conn.execute(
            "INSERT INTO soul_meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT(key) DO NOTHING",
            params![SCHEMA_VERSION.to_string()],
        )?;
        Ok(())
    }

    fn lock_agent(&mut self, _agent: &str) -> Result<(), SoulError> {
        // A SQLite write transaction holds the database's write lock (mira begins them
        // IMMEDIATE): no other writer runs until it ends.
        Ok(())
    }

    fn read_overview(&mut self) -> Result<Overview, SoulError> {
        let agents: i64 = self.conn.query_row(
            "SELECT count(DISTINCT agent_id) FROM soul_identities",
            [],
            |r| r.get(0),
        )?;
        let last = self
            .conn
            .query_row(
                "SELECT observed_at, agent_id FROM soul_observations
                 ORDER BY observed_at DESC, rowid DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        Ok(Overview::new(agents, last))
    }

    fn identity_data(&mut self, agent: &str, limit: i64) -> Result<Vec<String>, SoulError> {
        self.strings(
            "SELECT data FROM soul_identities WHERE agent_id = ?1 ORDER BY version DESC LIMIT ?2",
            params![agent, limit],
        )
    }

    fn version_count(&mut self, agent: &str) -> Result<i64, SoulError> {
        Ok(self.conn.query_row(
            "SELECT count(*) FROM soul_identities WHERE agent_id = ?1",
            params![agent],
            |r| r.get(0),
        )?)
    }

    fn insert_identity(&mut self, id: &Identity, data: &str, below: i64) -> Result<(), SoulError> {
        self.conn.execute(
            "INSERT INTO soul_identities (id, agent_id, version, created_at, parent_id, model_id, reason, confidence, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![id.id, id.agent_id, id.version, id.created_at, id.parent_id, id.model_id, id.reason, id.confidence, data],
        )?;
        self.conn.execute(
            "DELETE FROM soul_identities WHERE agent_id = ?1 AND version <= ?2",
            params![id.agent_id, below],
        )?;
        Ok(())
    }

    fn insert_observation_data(
        &mut self,
        rec: &ObservationRecord<'_>,
        row_id: &str,
        data: &str,
        keep: i64,
    ) -> Result<(), SoulError> {
        self.conn.execute(
            "INSERT INTO soul_observations (id, agent_id, model_id, session_id, identity_id, observed_at, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![row_id, rec.agent, rec.model, rec.session, rec.identity_id, rec.at, data],
        )?;
        self.conn.execute(
            "DELETE FROM soul_observations WHERE agent_id = ?1 AND id NOT IN (
                 SELECT id FROM soul_observations WHERE agent_id = ?1
                 ORDER BY observed_at DESC, rowid DESC LIMIT ?2)",
            params![rec.agent, keep],
        )?;
        Ok(())
    }

    fn observation_data(
        &mut self,
        agent: &str,
        model: &str,
        limit: i64,
    ) -> Result<Vec<String>, SoulError> {
        self.strings(
            "SELECT data FROM soul_observations WHERE agent_id = ?1 AND model_id = ?2
             ORDER BY observed_at DESC, rowid DESC LIMIT ?3",
            params![agent, model, limit],
        )
    }

    fn observed_models(&mut self, agent: &str) -> Result<Vec<(String, i64)>, SoulError> {
        let mut stmt = self.conn.prepare(
            "SELECT model_id, count(*) FROM soul_observations WHERE agent_id = ?1
             GROUP BY model_id ORDER BY max(observed_at) DESC, max(rowid) DESC",
        )?;
        let rows = stmt.query_map(params![agent], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn insert_swap(
        &mut self,
        agent: &str,
        swap: &Swap,
        identity_id: Option<&str>,
    ) -> Result<(), SoulError> {
        self.conn.execute(
            "INSERT INTO soul_model_swaps (agent_id, from_model, to_model, swapped_at, identity_id, reinforced, drift)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![agent, swap.from_model, swap.to_model, swap.swapped_at, identity_id, swap.reinforced, swap.drift],
        )?;
        Ok(())
    }

    fn latest_swap(&mut self, agent: &str) -> Result<Option<Swap>, SoulError> {
        Ok(self
            .conn
            .query_row(
                "SELECT from_model, to_model, swapped_at, reinforced, drift FROM soul_model_swaps
                 WHERE agent_id = ?1 ORDER BY swapped_at DESC, id DESC LIMIT 1",
                params![agent],
                |r| {
                    Ok(Swap {
                        from_model: r.get(0)?,
                        to_model: r.get(1)?,
                        swapped_at: r.get(2)?,
                        reinforced: r.get(3)?,
                        drift: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_is_idempotent_and_refuses_a_newer_schema() {
        let conn = Connection::open_in_memory().expect("db");
        let store: &mut dyn SoulStore = &mut SqliteSoul::new(&conn);
        assert!(!store.ready().expect("ready"));
        assert_eq!(store.overview().expect("overview"), Overview::default());
        store.init().expect("init");
        store.init().expect("init again");
        assert!(store.ready().expect("ready"));
        conn.execute(
            "UPDATE soul_meta SET value = '99' WHERE key = 'schema_version'",
            [],
        )
        .expect("bump");
        let e = store.init().unwrap_err().to_string();
        assert!(e.contains("schema version 99"), "{e}");
        assert_eq!(store.ready().unwrap_err().to_string(), e);
    }

    #[test]
    fn versions_are_pruned_to_the_history_length() {
        let conn = Connection::open_in_memory().expect("db");
        let store: &mut dyn SoulStore = &mut SqliteSoul::new(&conn);
        store.init().expect("init");
        let mut id = Identity::neutral("a", "m", 0);
        for i in 1..=5 {
            id = id.derive("m", "capture", i);
            store.insert(&id, 3).expect("insert");
        }
        let h = store.history("a", 10).expect("history");
        assert_eq!(
            h.iter().map(|x| x.version).collect::<Vec<_>>(),
            vec![5, 4, 3]
        );
        assert_eq!(
            store.latest("a").expect("latest").map(|x| x.version),
            Some(5)
        );
        assert!(store.latest("b").expect("latest").is_none());
    }

    #[test]
    fn a_storage_error_keeps_its_cause() {
        use std::error::Error as _;
        let conn = Connection::open_in_memory().expect("db");
        let store: &mut dyn SoulStore = &mut SqliteSoul::new(&conn);
        store.init().expect("init");
        let id = Identity::neutral("a", "m", 0).derive("m", "capture", 1);
        store.insert(&id, 3).expect("insert");
        conn.execute("UPDATE soul_identities SET data = 'not json'", [])
            .expect("damage");
        let e = store.latest("a").unwrap_err();
        assert!(matches!(e, SoulError::Storage { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "SOUL storage: a stored identity cannot be read"
        );
        let cause = e.source().expect("the JSON error is kept");
        assert!(cause.is::<serde_json::Error>(), "{cause}");
        conn.execute("DROP TABLE soul_identities", [])
            .expect("drop");
        let e = store.latest("a").unwrap_err();
        let cause = e.source().expect("the SQLite error is kept");
        assert!(cause.to_string().contains("no such table"), "{cause}");
    }
}
