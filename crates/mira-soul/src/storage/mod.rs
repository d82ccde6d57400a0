//! Storage: SOUL's own tables in mira's database, SQLite ([`SqliteSoul`]) or PostgreSQL
//! ([`PgSoul`]).
//!
//! SOUL owns its schema, created by `init` when SOUL is first used
//! (so a mira that never enables SOUL has no `soul_*` table) and versioned in `soul_meta` (key
//! `schema_version`), independently of mira's migrations: mira-store knows nothing about
//! identities, and the dependency stays mira → soul → core. A [`SoulStore`] wraps a connection
//! whose transaction the caller owns (mira runs each operation in one write transaction, rolled
//! back on error, or on a read connection).
//!
//! The trait holds what differs between the databases (the SQL); what SOUL does with the rows
//! (schema version checks, JSON, pruning policy) is written once, in the methods of
//! `dyn SoulStore`. Tables (times in unix milliseconds, identities and observations as JSON
//! text, the same columns on both databases):
//! - `soul_identities`: one row per version (`agent_id`, `version` unique together), the
//!   snapshot as JSON in `data`, with its model, reason and confidence as columns;
//! - `soul_observations`: what each capture observed (JSON), with its model and session, for
//!   drift between models;
//! - `soul_model_swaps`: each model change, with the agent (the reference lost it), whether
//!   the identity was reinforced and the drift measured between the two models.
//!
//! Two servers writing for one agent at once take turns: every write operation first calls
//! [`SoulStore::lock_agent`], so the second reads the version the first wrote.

mod postgres;
mod sqlite;

pub use self::postgres::PgSoul;
pub use self::sqlite::SqliteSoul;

use crate::extract::Observation;
use crate::model::Identity;
use crate::SoulError;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 1;

/// SOUL's tables on one database: each method is one statement (or an insert and its pruning)
/// over a connection or transaction the caller holds. Use it through the methods of
/// `dyn SoulStore` (`latest`, `insert`, …), which add what both databases share.
pub trait SoulStore {
    /// The `schema_version` recorded in `soul_meta`, as stored; `None` without that table or
    /// row.
    fn recorded_version(&mut self) -> Result<Option<String>, SoulError>;

    /// Creates the missing tables and records [`SCHEMA_VERSION`] unless a version is recorded
    /// (safe when several servers do it at once).
    fn create_schema(&mut self) -> Result<(), SoulError>;

    /// Makes the other writers of `agent` wait until this transaction ends (SQLite's write
    /// transactions already exclude each other; PostgreSQL takes an advisory lock).
    fn lock_agent(&mut self, agent: &str) -> Result<(), SoulError>;

    /// The agents with an identity and the latest observation (the tables exist).
    fn read_overview(&mut self) -> Result<Overview, SoulError>;

    /// The stored JSON of the latest `limit` versions of `agent`, newest first.
    fn identity_data(&mut self, agent: &str, limit: i64) -> Result<Vec<String>, SoulError>;

    /// Number of stored versions of an agent.
    fn version_count(&mut self, agent: &str) -> Result<i64, SoulError>;

    /// Stores `id` with its JSON `data`, then deletes the agent's versions numbered `below` or
    /// less.
    fn insert_identity(&mut self, id: &Identity, data: &str, below: i64) -> Result<(), SoulError>;

    /// Stores an observation under the new id `row_id` with its JSON `data`, then keeps only
    /// the agent's latest `keep`.
    fn insert_observation_data(
        &mut self,
        rec: &ObservationRecord<'_>,
        row_id: &str,
        data: &str,
        keep: i64,
    ) -> Result<(), SoulError>;

    /// The stored JSON of the latest `limit` observations of `agent` under `model`, newest
    /// first.
    fn observation_data(
        &mut self,
        agent: &str,
        model: &str,
        limit: i64,
    ) -> Result<Vec<String>, SoulError>;

    /// The models an agent was observed under, with their number of observations, most
    /// recently observed first.
    fn observed_models(&mut self, agent: &str) -> Result<Vec<(String, i64)>, SoulError>;

    /// Records a model change.
    fn insert_swap(
        &mut self,
        agent: &str,
        swap: &Swap,
        identity_id: Option<&str>,
    ) -> Result<(), SoulError>;

    /// The latest model change of an agent.
    fn latest_swap(&mut self, agent: &str) -> Result<Option<Swap>, SoulError>;
}

/// A count or limit as SQL takes it.
fn sql_count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn decode<T: serde::de::DeserializeOwned>(data: &str, what: &str) -> Result<T, SoulError> {
    serde_json::from_str(data).map_err(SoulError::json(what))
}

impl dyn SoulStore + '_ {
    /// The SOUL schema version stored in the database (None: no SOUL table yet). Fails when the
    /// database holds a newer one than this build supports.
    fn schema_version(&mut self) -> Result<Option<i64>, SoulError> {
        let Some(v) = self.recorded_version()? else {
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

    /// Whether SOUL's tables are there at this build's version (false: `init`
    /// must run first). Reads only; fails like `init` on a newer schema.
    pub fn ready(&mut self) -> Result<bool, SoulError> {
        Ok(self.schema_version()? == Some(SCHEMA_VERSION))
    }

    /// Creates SOUL's tables if needed and checks their version. Fails (and SOUL stays off)
    /// when the database holds a newer SOUL schema or cannot be written.
    pub fn init(&mut self) -> Result<(), SoulError> {
        self.schema_version()?;
        self.create_schema()
    }

    /// The agents and the latest capture (all zero when SOUL's tables are not there).
    pub fn overview(&mut self) -> Result<Overview, SoulError> {
        if self.schema_version()?.is_none() {
            return Ok(Overview::default());
        }
        self.read_overview()
    }

    /// The latest version of an agent's identity.
    pub fn latest(&mut self, agent: &str) -> Result<Option<Identity>, SoulError> {
        Ok(self.history(agent, 1)?.pop())
    }

    /// The latest `limit` versions, newest first.
    pub fn history(&mut self, agent: &str, limit: usize) -> Result<Vec<Identity>, SoulError> {
        self.identity_data(agent, sql_count(limit))?
            .iter()
            .map(|d| decode(d, "a stored identity cannot be read"))
            .collect()
    }

    /// Stores a new version, then keeps only the latest `keep` versions of the agent.
    pub fn insert(&mut self, id: &Identity, keep: usize) -> Result<(), SoulError> {
        let data =
            serde_json::to_string(id).map_err(SoulError::json("cannot encode the identity"))?;
        self.insert_identity(id, &data, id.version - sql_count(keep.max(1)))
    }

    /// Stores what a capture observed, keeping the latest `keep` observations of the agent.
    pub fn insert_observation(
        &mut self,
        rec: &ObservationRecord<'_>,
        keep: usize,
    ) -> Result<(), SoulError> {
        let data = serde_json::to_string(rec.observation)
            .map_err(SoulError::json("cannot encode the observation"))?;
        let row_id = uuid::Uuid::new_v4().to_string();
        self.insert_observation_data(rec, &row_id, &data, sql_count(keep.max(1)))
    }

    /// The latest `limit` observations of an agent under a model, oldest first.
    pub fn observations(
        &mut self,
        agent: &str,
        model: &str,
        limit: usize,
    ) -> Result<Vec<Observation>, SoulError> {
        let mut out: Vec<Observation> = self
            .observation_data(agent, model, sql_count(limit))?
            .iter()
            .map(|d| decode(d, "a stored observation cannot be read"))
            .collect::<Result<_, _>>()?;
        out.reverse();
        Ok(out)
    }
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

impl Overview {
    /// The overview from the number of agents and the latest observation's time and agent.
    fn new(agents: i64, last: Option<(i64, String)>) -> Overview {
        let (last_capture, last_agent) = last.unzip();
        Overview {
            agents: u64::try_from(agents).unwrap_or(0),
            last_capture,
            last_agent,
        }
    }
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

/// A recorded model change.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
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
