//! Other databases on the configured server: the options that name one instead of the URL's,
//! and creating or dropping one (`mira bench` keeps one database per store size).

use super::{client_config, connect_once, PgOptions, PgStore};
use crate::{Result, StoreError};

/// Whether `name` is a database name mira creates: a lower-case letter, then up to 62 lower-case
/// letters, digits or underscores (nothing to quote, within PostgreSQL's 63 bytes).
fn checked_name(name: &str) -> Result<&str> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 63
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(name)
    } else {
        Err(StoreError::Config(format!(
            "'{name}' is not a database name mira can use: a lower-case letter, then lower-case letters, digits or underscores, at most 63 in all"
        )))
    }
}

/// `url` with its database replaced by `name`: the path of a `postgres://` URL, else (the
/// `key=value` form) a `dbname` after the others, which wins.
fn url_with_database(url: &str, name: &str) -> String {
    let url = url.trim();
    let rest = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme));
    let Some(rest) = rest else {
        return format!("{url} dbname={name}");
    };
    let scheme = &url[..url.len() - rest.len()];
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (rest, String::new()),
    };
    let authority = before_query.split('/').next().unwrap_or_default();
    format!("{scheme}{authority}/{name}{query}")
}

impl PgOptions {
    /// The database these options name (the user's name when the URL names none, as
    /// PostgreSQL does).
    pub fn database(&self) -> Result<String> {
        let (config, _) = client_config(self)?;
        Ok(config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or_default()
            .to_owned())
    }

    /// These options on database `name` of the same server, in place of the URL's database.
    pub fn on_database(&self, name: &str) -> Result<PgOptions> {
        let url = url_with_database(&self.url, checked_name(name)?);
        let (named, _) = client_config(&PgOptions {
            url: url.clone(),
            ..self.clone()
        })?;
        if named.get_dbname() != Some(name) {
            return Err(StoreError::Config(format!(
                "cannot point storage.postgres.url at the database {name} (its parameters name another): write it as postgres://user:password@host:5432/database"
            )));
        }
        Ok(PgOptions {
            url,
            ..self.clone()
        })
    }
}

impl PgStore {
    /// Creates the empty database `name` on the server of `opts` (connected to the database
    /// `opts` names), first dropping one of that name, with its connections, if there is one.
    pub fn recreate_database(opts: &PgOptions, name: &str) -> Result<()> {
        Self::drop_database(opts, name)?;
        admin(opts, &format!("CREATE DATABASE {}", checked_name(name)?))
    }

    /// Drops the database `name` on the server of `opts`, with its connections, if it exists.
    pub fn drop_database(opts: &PgOptions, name: &str) -> Result<()> {
        admin(
            opts,
            &format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                checked_name(name)?
            ),
        )
    }
}

/// Runs one statement on a connection of its own to the database of `opts` (`CREATE DATABASE`
/// cannot run in a transaction, nor on a pooled connection of the database it drops).
fn admin(opts: &PgOptions, statement: &str) -> Result<()> {
    let (config, tls) = client_config(opts)?;
    let location = super::public_location(&config);
    let mut client = connect_once(&config, &tls, &location)?;
    client.batch_execute(statement).map_err(|e| {
        StoreError::Config(format!(
            "{statement} failed on {location} ({}): connect as a user allowed to create databases",
            crate::error::reason(&e)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_of_a_url_is_replaced() {
        let on = |url: &str| {
            PgOptions {
                url: url.into(),
                ..PgOptions::default()
            }
            .on_database("mira_bench_10")
            .map(|o| o.url)
        };
        assert_eq!(
            on("postgres://u:p@db:5432/mira").unwrap(),
            "postgres://u:p@db:5432/mira_bench_10"
        );
        assert_eq!(
            on("postgresql://u@h1:5432,h2:5433?sslmode=disable").unwrap(),
            "postgresql://u@h1:5432,h2:5433/mira_bench_10?sslmode=disable"
        );
        assert_eq!(
            on("host=db user=u dbname=mira").unwrap(),
            "host=db user=u dbname=mira dbname=mira_bench_10"
        );
        let url = |u: &str| PgOptions {
            url: u.into(),
            ..PgOptions::default()
        };
        assert_eq!(url("postgres://u@db/mira").database().unwrap(), "mira");
        assert_eq!(url("postgres://u@db").database().unwrap(), "u");
        assert!(on("postgres://u@db/mira?dbname=other")
            .unwrap_err()
            .to_string()
            .contains("its parameters name another"));
    }

    #[test]
    fn only_plain_names_are_created() {
        for bad in ["", "Mira", "1st", "a-b", "a;drop", &"a".repeat(64)] {
            assert!(checked_name(bad).is_err(), "{bad}");
        }
        assert!(checked_name("mira_bench_100000_0a1b2c").is_ok());
    }
}
