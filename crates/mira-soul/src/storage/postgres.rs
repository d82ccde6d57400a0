//! SOUL's tables in mira's PostgreSQL database: the SQLite columns with PostgreSQL's types
//! (`BIGINT` times and versions, `DOUBLE PRECISION` reals, `BOOLEAN` flags), JSON kept as
//! `TEXT` as on SQLite (JSONB would refuse the `\u0000` escape a conversation may carry), and
//! an identity column `seq` on observations for the insertion order SQLite's `rowid` gives.
//!
//! Writers of one agent take a transaction-level advisory lock on it
//! ([`SoulStore::lock_agent`]): the second of two concurrent captures waits for the first to
//! commit, then reads its version and writes the next one, so versions stay consecutive and
//! none is lost. Creating the tables takes an advisory lock too (servers may start together).

use super::{ObservationRecord, Overview, SoulStore, Swap, SCHEMA_VERSION};
use crate::model::Identity;
use crate::SoulError;
use postgres::types::ToSql;
use postgres::GenericClient;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS soul_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS soul_identities (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    version     BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    parent_id   TEXT,
    model_id    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    confidence  DOUBLE PRECISION NOT NULL,
    data        TEXT NOT NULL,
    UNIQUE (agent_id, version)
);
CREATE TABLE IF NOT EXISTS soul_observations (
    id          TEXT PRIMARY KEY,
    seq         BIGINT GENERATED ALWAYS AS IDENTITY,
    agent_id    TEXT NOT NULL,
    model_id    TEXT NOT NULL,
    session_id  TEXT,
    identity_id TEXT,
    observed_at BIGINT NOT NULL,
    data        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_soul_observations_agent_model
    ON soul_observations (agent_id, model_id, observed_at);
CREATE TABLE IF NOT EXISTS soul_model_swaps (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    from_model  TEXT NOT NULL,
    to_model    TEXT NOT NULL,
    swapped_at  BIGINT NOT NULL,
    identity_id TEXT,
    reinforced  BOOLEAN NOT NULL,
    drift       DOUBLE PRECISION
);
CREATE INDEX IF NOT EXISTS idx_soul_swaps_agent ON soul_model_swaps (agent_id, swapped_at);
";

/// SOUL's storage on a PostgreSQL client or transaction.
#[derive(Debug)]
pub struct PgSoul<'a, C: GenericClient> {
    client: &'a mut C,
}

impl<'a, C: GenericClient> PgSoul<'a, C> {
    /// SOUL's tables through `client`: a transaction for the operations that write (their
    /// advisory locks last until it ends), any client for those that read.
    pub fn new(client: &'a mut C) -> PgSoul<'a, C> {
        PgSoul { client }
    }

    fn strings(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<String>, SoulError> {
        Ok(self
            .client
            .query(sql, params)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?)
    }
}

impl<C: GenericClient> SoulStore for PgSoul<'_, C> {
    fn recorded_version(&mut self) -> Result<Option<String>, SoulError> {
        let exists: bool = self
            .client
            .query_one("SELECT to_regclass('soul_meta') IS NOT NULL", &[])?
            .try_get(0)?;
        if !exists {
            return Ok(None);
        }
        Ok(self
            .client
            .query_opt(
                "SELECT value FROM soul_meta WHERE key = 'schema_version'",
                &[],
            )?
            .map(|r| r.try_get(0))
            .transpose()?)
    }

    fn create_schema(&mut self) -> Result<(), SoulError> {
        self.client.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('mira soul schema', 0))",
            &[],
        )?;
        self.client.batch_execute(SCHEMA)?;
        self.client.execute(
            "INSERT INTO soul_meta (key, value) VALUES ('schema_version', $1)
             ON CONFLICT (key) DO NOTHING",
            &[&SCHEMA_VERSION.to_string()],
        )?;
        Ok(())
    }

    fn lock_agent(&mut self, agent: &str) -> Result<(), SoulError> {
        self.client.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('mira soul agent ' || $1, 0))",
            &[&agent],
        )?;
        Ok(())
    }

    fn read_overview(&mut self) -> Result<Overview, SoulError> {
        let agents: i64 = self
            .client
            .query_one("SELECT count(DISTINCT agent_id) FROM soul_identities", &[])?
            .try_get(0)?;
        let last = self
            .client
            .query_opt(
                "SELECT observed_at, agent_id FROM soul_observations
                 ORDER BY observed_at DESC, seq DESC LIMIT 1",
                &[],
            )?
            .map(|r| Ok::<_, postgres::Error>((r.try_get(0)?, r.try_get(1)?)))
            .transpose()?;
        Ok(Overview::new(agents, last))
    }

    fn identity_data(&mut self, agent: &str, limit: i64) -> Result<Vec<String>, SoulError> {
        self.strings(
            "SELECT data FROM soul_identities WHERE agent_id = $1 ORDER BY version DESC LIMIT $2",
            &[&agent, &limit],
        )
    }

    fn version_count(&mut self, agent: &str) -> Result<i64, SoulError> {
        Ok(self
            .client
            .query_one(
                "SELECT count(*) FROM soul_identities WHERE agent_id = $1",
                &[&agent],
            )?
            .try_get(0)?)
    }

    fn insert_identity(&mut self, id: &Identity, data: &str, below: i64) -> Result<(), SoulError> {
        self.client.execute(
            "INSERT INTO soul_identities (id, agent_id, version, created_at, parent_id, model_id, reason, confidence, data)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[&id.id, &id.agent_id, &id.version, &id.created_at, &id.parent_id, &id.model_id, &id.reason, &id.confidence, &data],
        )?;
        self.client.execute(
            "DELETE FROM soul_identities WHERE agent_id = $1 AND version <= $2",
            &[&id.agent_id, &below],
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
        self.client.execute(
            "INSERT INTO soul_observations (id, agent_id, model_id, session_id, identity_id, observed_at, data)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[&row_id, &rec.agent, &rec.model, &rec.session, &rec.identity_id, &rec.at, &data],
        )?;
        self.client.execute(
            "DELETE FROM soul_observations WHERE agent_id = $1 AND id NOT IN (
                 SELECT id FROM soul_observations WHERE agent_id = $1
                 ORDER BY observed_at DESC, seq DESC LIMIT $2)",
            &[&rec.agent, &keep],
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
            "SELECT data FROM soul_observations WHERE agent_id = $1 AND model_id = $2
             ORDER BY observed_at DESC, seq DESC LIMIT $3",
            &[&agent, &model, &limit],
        )
    }

    fn observed_models(&mut self, agent: &str) -> Result<Vec<(String, i64)>, SoulError> {
        Ok(self
            .client
            .query(
                "SELECT model_id, count(*) FROM soul_observations WHERE agent_id = $1
                 GROUP BY model_id ORDER BY max(observed_at) DESC, max(seq) DESC",
                &[&agent],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()?)
    }

    fn insert_swap(
        &mut self,
        agent: &str,
        swap: &Swap,
        identity_id: Option<&str>,
    ) -> Result<(), SoulError> {
        self.client.execute(
            "INSERT INTO soul_model_swaps (agent_id, from_model, to_model, swapped_at, identity_id, reinforced, drift)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[&agent, &swap.from_model, &swap.to_model, &swap.swapped_at, &identity_id, &swap.reinforced, &swap.drift],
        )?;
        Ok(())
    }

    fn latest_swap(&mut self, agent: &str) -> Result<Option<Swap>, SoulError> {
        Ok(self
            .client
            .query_opt(
                "SELECT from_model, to_model, swapped_at, reinforced, drift FROM soul_model_swaps
                 WHERE agent_id = $1 ORDER BY swapped_at DESC, id DESC LIMIT 1",
                &[&agent],
            )?
            .map(|r| {
                Ok::<_, postgres::Error>(Swap {
                    from_model: r.try_get(0)?,
                    to_model: r.try_get(1)?,
                    swapped_at: r.try_get(2)?,
                    reinforced: r.try_get(3)?,
                    drift: r.try_get(4)?,
                })
            })
            .transpose()?)
    }
}
