//! Storage: SOUL's own tables in mira's SQLite file.
//!
//! SOUL owns its schema, created by [`init`] when SOUL is enabled (so a mira that never
//! enables SOUL has no `soul_*` table) and versioned in `soul_meta` (key `schema_version`),
//! independently of mira's migrations: mira-store knows nothing about identities, and the
//! dependency stays mira → soul → core. Every function takes a `&Connection`; the caller
//! owns the transaction (mira runs each tool in one write transaction, rolled back on error).
//!
//! Tables (STRICT, times in unix milliseconds):
//! - `soul_identities`: one row per version (`agent_id`, `version` unique together), the
//!   snapshot as JSON in `data`, with its model, reason and confidence as columns;
//! - `soul_observations`: what each capture observed (JSON), with its model and session, for
//!   drift between models;
//! - `soul_model_swaps`: each model change, with the agent (the reference lost it), whether
//!   the identity was reinforced and the drift measured between the two models.

use crate::extract::Observation;
use crate::model::Identity;
use crate::SoulError;
use rusqlite::{params, Connection, OptionalExtension};

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 1;

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

/// The SOUL schema version stored in the database (None: no SOUL table yet). Fails when the
/// database holds a newer one than this build supports.
fn schema_version(conn: &Connection) -> Result<Option<i64>, SoulError> {
    let existing: Option<String> = conn
        .query_row(
            "SELECT value FROM soul_meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .or_else(|e| match e {
            rusqlite::Error::SqliteFailure(_, Some(ref m)) if m.contains("no such table") => {
                Ok(None)
            }
            e => Err(e),
        })?;
    let Some(v) = existing else {
        return Ok(None);
    };
    let found: i64 = v.parse().map_err(|_| {
        SoulError::storage(format!("soul_meta.schema_version is '{v}', not a number"))
    })?;
    if found > SCHEMA_VERSION {
        return Err(SoulError::storage(format!(
            "the SOUL tables are at schema version {found}, newer than this mira supports ({SCHEMA_VERSION}); upgrade mira"
        )));
    }
    Ok(Some(found))
}

/// Whether SOUL's tables are there at this build's version (false: [`init`] must run first).
/// Reads only; fails like [`init`] on a newer schema.
pub fn ready(conn: &Connection) -> Result<bool, SoulError> {
    Ok(schema_version(conn)? == Some(SCHEMA_VERSION))
}

/// Creates SOUL's tables if needed and checks their version. Fails (and SOUL stays off) when
/// the database holds a newer SOUL schema or cannot be written.
pub fn init(conn: &Connection) -> Result<(), SoulError> {
    schema_version(conn)?;
    conn.execute_batch(SCHEMA)?;
    conn.execute(
        "INSERT INTO soul_meta (key, value) VALUES ('schema_version', ?1)
         ON CONFLICT(key) DO NOTHING",
        params![SCHEMA_VERSION.to_string()],
    )?;
    Ok(())
}

/// SOUL's contents at a glance, for mira's status.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Overview {
    /// Agents with an identity.
    pub agents: u64,
    /// When the latest capture was made (unix ms).
    pub last_capture: Option<i64>,
    /// The agent of the latest capture.
    pub last_agent: Option<String>,
}

/// The agents and the latest capture (all zero when SOUL's tables are not there).
pub fn overview(conn: &Connection) -> Result<Overview, SoulError> {
    if schema_version(conn)?.is_none() {
        return Ok(Overview::default());
    }
    let agents: i64 = conn.query_row(
        "SELECT count(DISTINCT agent_id) FROM soul_identities",
        [],
        |r| r.get(0),
    )?;
    let last: Option<(i64, String)> = conn
        .query_row(
            "SELECT observed_at, agent_id FROM soul_observations
             ORDER BY observed_at DESC, rowid DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    Ok(Overview {
        agents: u64::try_from(agents).unwrap_or(0),
        last_capture: last.as_ref().map(|l| l.0),
        last_agent: last.map(|l| l.1),
    })
}

fn decode(data: String) -> Result<Identity, SoulError> {
    serde_json::from_str(&data).map_err(SoulError::json("a stored identity cannot be read"))
}

/// The latest version of an agent's identity.
pub fn latest(conn: &Connection, agent: &str) -> Result<Option<Identity>, SoulError> {
    conn.query_row(
        "SELECT data FROM soul_identities WHERE agent_id = ?1 ORDER BY version DESC LIMIT 1",
        params![agent],
        |r| r.get::<_, String>(0),
    )
    .optional()?
    .map(decode)
    .transpose()
}

/// The latest `limit` versions, newest first.
pub fn history(conn: &Connection, agent: &str, limit: usize) -> Result<Vec<Identity>, SoulError> {
    let mut stmt = conn.prepare(
        "SELECT data FROM soul_identities WHERE agent_id = ?1 ORDER BY version DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![agent, limit as i64], |r| r.get::<_, String>(0))?;
    rows.map(|r| decode(r?)).collect()
}

/// Number of stored versions of an agent.
pub fn version_count(conn: &Connection, agent: &str) -> Result<i64, SoulError> {
    Ok(conn.query_row(
        "SELECT count(*) FROM soul_identities WHERE agent_id = ?1",
        params![agent],
        |r| r.get(0),
    )?)
}

/// Stores a new version, then keeps only the latest `keep` versions of the agent.
pub fn insert(conn: &Connection, id: &Identity, keep: usize) -> Result<(), SoulError> {
    let data = serde_json::to_string(id).map_err(SoulError::json("cannot encode the identity"))?;
    conn.execute(
        "INSERT INTO soul_identities (id, agent_id, version, created_at, parent_id, model_id, reason, confidence, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![id.id, id.agent_id, id.version, id.created_at, id.parent_id, id.model_id, id.reason, id.confidence, data],
    )?;
    conn.execute(
        "DELETE FROM soul_identities WHERE agent_id = ?1 AND version <= ?2",
        params![id.agent_id, id.version - keep.max(1) as i64],
    )?;
    Ok(())
}

/// One capture's observation, as stored.
#[derive(Debug, Clone, Copy)]
pub struct ObservationRecord<'a> {
    /// The agent.
    pub agent: &'a str,
    /// The model it ran on.
    pub model: &'a str,
    /// The session, if given.
    pub session: Option<&'a str>,
    /// The identity version the capture produced.
    pub identity_id: &'a str,
    /// What was observed.
    pub observation: &'a Observation,
    /// When (unix ms).
    pub at: i64,
}

/// Stores what a capture observed, keeping the latest `keep` observations of the agent.
pub fn insert_observation(
    conn: &Connection,
    rec: &ObservationRecord<'_>,
    keep: usize,
) -> Result<(), SoulError> {
    let data = serde_json::to_string(rec.observation)
        .map_err(SoulError::json("cannot encode the observation"))?;
    conn.execute(
        "INSERT INTO soul_observations (id, agent_id, model_id, session_id, identity_id, observed_at, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![uuid::Uuid::new_v4().to_string(), rec.agent, rec.model, rec.session, rec.identity_id, rec.at, data],
    )?;
    conn.execute(
        "DELETE FROM soul_observations WHERE agent_id = ?1 AND id NOT IN (
             SELECT id FROM soul_observations WHERE agent_id = ?1
             ORDER BY observed_at DESC, rowid DESC LIMIT ?2)",
        params![rec.agent, keep.max(1) as i64],
    )?;
    Ok(())
}

/// The latest `limit` observations of an agent under a model, oldest first.
pub fn observations(
    conn: &Connection,
    agent: &str,
    model: &str,
    limit: usize,
) -> Result<Vec<Observation>, SoulError> {
    let mut stmt = conn.prepare(
        "SELECT data FROM soul_observations WHERE agent_id = ?1 AND model_id = ?2
         ORDER BY observed_at DESC, rowid DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![agent, model, limit as i64], |r| {
        r.get::<_, String>(0)
    })?;
    let mut out: Vec<Observation> = rows
        .map(|r| {
            serde_json::from_str(&r?)
                .map_err(SoulError::json("a stored observation cannot be read"))
        })
        .collect::<Result<_, _>>()?;
    out.reverse();
    Ok(out)
}

/// The models an agent was observed under, with their number of observations.
pub fn observed_models(conn: &Connection, agent: &str) -> Result<Vec<(String, i64)>, SoulError> {
    let mut stmt = conn.prepare(
        "SELECT model_id, count(*) FROM soul_observations WHERE agent_id = ?1
         GROUP BY model_id ORDER BY max(observed_at) DESC",
    )?;
    let rows = stmt.query_map(params![agent], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A recorded model change.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Swap {
    /// Previous model.
    pub from_model: String,
    /// New model.
    pub to_model: String,
    /// When (unix ms).
    pub swapped_at: i64,
    /// Whether a reinforced version was stored.
    pub reinforced: bool,
    /// Drift measured between the two models' observations, when both had some.
    pub drift: Option<f64>,
}

/// Records a model change.
pub fn insert_swap(
    conn: &Connection,
    agent: &str,
    swap: &Swap,
    identity_id: Option<&str>,
) -> Result<(), SoulError> {
    conn.execute(
        "INSERT INTO soul_model_swaps (agent_id, from_model, to_model, swapped_at, identity_id, reinforced, drift)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![agent, swap.from_model, swap.to_model, swap.swapped_at, identity_id, swap.reinforced, swap.drift],
    )?;
    Ok(())
}

/// The latest model change of an agent.
pub fn latest_swap(conn: &Connection, agent: &str) -> Result<Option<Swap>, SoulError> {
    Ok(conn
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_is_idempotent_and_refuses_a_newer_schema() {
        let conn = Connection::open_in_memory().expect("db");
        assert!(!ready(&conn).expect("ready"));
        assert_eq!(overview(&conn).expect("overview"), Overview::default());
        init(&conn).expect("init");
        init(&conn).expect("init again");
        assert!(ready(&conn).expect("ready"));
        conn.execute(
            "UPDATE soul_meta SET value = '99' WHERE key = 'schema_version'",
            [],
        )
        .expect("bump");
        let e = init(&conn).unwrap_err().to_string();
        assert!(e.contains("schema version 99"), "{e}");
        assert_eq!(ready(&conn).unwrap_err().to_string(), e);
    }

    #[test]
    fn versions_are_pruned_to_the_history_length() {
        let conn = Connection::open_in_memory().expect("db");
        init(&conn).expect("init");
        let mut id = Identity::neutral("a", "m", 0);
        for i in 1..=5 {
            id = id.derive("m", "capture", i);
            insert(&conn, &id, 3).expect("insert");
        }
        let h = history(&conn, "a", 10).expect("history");
        assert_eq!(
            h.iter().map(|x| x.version).collect::<Vec<_>>(),
            vec![5, 4, 3]
        );
        assert_eq!(
            latest(&conn, "a").expect("latest").map(|x| x.version),
            Some(5)
        );
        assert!(latest(&conn, "b").expect("latest").is_none());
    }

    #[test]
    fn a_storage_error_keeps_its_cause() {
        use std::error::Error as _;
        let conn = Connection::open_in_memory().expect("db");
        init(&conn).expect("init");
        let id = Identity::neutral("a", "m", 0).derive("m", "capture", 1);
        insert(&conn, &id, 3).expect("insert");
        conn.execute("UPDATE soul_identities SET data = 'not json'", [])
            .expect("damage");
        let e = latest(&conn, "a").unwrap_err();
        assert!(matches!(e, SoulError::Storage { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "SOUL storage: a stored identity cannot be read"
        );
        let cause = e.source().expect("the JSON error is kept");
        assert!(cause.is::<serde_json::Error>(), "{cause}");
        conn.execute("DROP TABLE soul_identities", [])
            .expect("drop");
        let e = latest(&conn, "a").unwrap_err();
        let cause = e.source().expect("the SQLite error is kept");
        assert!(cause.to_string().contains("no such table"), "{cause}");
    }
}
