//! The versioned schema migrations of both backends, embedded in the binary. Each is applied
//! once, in order, in its own transaction, and recorded in `schema_version`. Versions may leave
//! gaps (numbers are reserved for work under way on other branches): a migration is applied
//! when its version is not recorded yet, even below the highest one recorded, so branches that
//! land in any order bring every database to the same schema.

/// One migration: its version, a name and the SQL that applies it.
pub struct Migration {
    /// Strictly increasing version number.
    pub version: i64,
    /// Short description.
    pub name: &'static str,
    /// SQL run in one transaction.
    pub sql: &'static str,
}

/// The last version of a list of migrations.
pub(crate) const fn latest(list: &[Migration]) -> i64 {
    list[list.len() - 1].version
}

/// Every migration of the SQLite schema, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "initial",
        sql: include_str!("../migrations/sqlite/001_initial.sql"),
    },
    Migration {
        version: 2,
        name: "fts_dates",
        sql: include_str!("../migrations/sqlite/002_fts_dates.sql"),
    },
    Migration {
        version: 3,
        name: "change_log_and_costs",
        sql: include_str!("../migrations/sqlite/003_change_log_and_costs.sql"),
    },
    Migration {
        version: 4,
        name: "pins",
        sql: include_str!("../migrations/sqlite/004_pins.sql"),
    },
    Migration {
        version: 5,
        name: "slots",
        sql: include_str!("../migrations/sqlite/005_slots.sql"),
    },
    Migration {
        version: 7,
        name: "sources",
        sql: include_str!("../migrations/sqlite/007_sources.sql"),
    },
    Migration {
        version: 8,
        name: "drop_overlap_cache",
        sql: include_str!("../migrations/sqlite/008_drop_overlap_cache.sql"),
    },
];

/// Every migration of the PostgreSQL schema, in order (the same tables and meaning as SQLite's
/// latest version, with pgvector's `vector` and full-text search in place of FTS5).
pub const PG_MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "initial",
        sql: include_str!("../migrations/postgres/001_initial.sql"),
    },
    Migration {
        version: 3,
        name: "sources",
        sql: include_str!("../migrations/postgres/003_sources.sql"),
    },
    Migration {
        version: 4,
        name: "drop_overlap_cache",
        sql: include_str!("../migrations/postgres/004_drop_overlap_cache.sql"),
    },
];
