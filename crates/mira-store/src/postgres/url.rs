//! The TLS parameters of a PostgreSQL URL (`sslmode`, `sslrootcert`), read the way libpq reads
//! them and taken out of the URL before the client parses the rest (it knows neither
//! `verify-ca`, `verify-full` nor `sslrootcert`).
//!
//! Both URL forms are read: `postgres://user@host/db?sslmode=require&sslrootcert=/ca.pem`
//! (values percent-encoded) and `host=db sslmode=require sslrootcert='/my ca.pem'` (values
//! optionally single-quoted, with backslash escapes).

use super::tls::{TlsMode, UrlTls};
use crate::{Result, StoreError};
use std::path::PathBuf;

/// `url` without its `sslmode` and `sslrootcert` parameters, and what they said.
pub(super) fn split_tls(url: &str) -> Result<(String, UrlTls)> {
    let url = url.trim();
    let is_uri = ["postgres://", "postgresql://"]
        .iter()
        .any(|s| url.starts_with(s));
    let (rest, params) = if is_uri {
        split_query(url)?
    } else {
        split_key_values(url)?
    };
    let mut tls = UrlTls::default();
    for (key, value) in params {
        match key.as_str() {
            "sslmode" => tls.mode = Some(mode(&value)?),
            _ => tls.root_cert = Some(PathBuf::from(value)),
        }
    }
    Ok((rest, tls))
}

/// Whether `key` is one of the parameters read here.
fn is_tls_key(key: &str) -> bool {
    key == "sslmode" || key == "sslrootcert"
}

fn mode(value: &str) -> Result<TlsMode> {
    match value {
        "disable" => Ok(TlsMode::Disable),
        "prefer" => Ok(TlsMode::Prefer),
        "require" => Ok(TlsMode::Require),
        "verify-ca" => Ok(TlsMode::VerifyCa),
        "verify-full" => Ok(TlsMode::VerifyFull),
        "allow" => Err(StoreError::Config(
            "sslmode=allow in the database URL is not supported (it connects without TLS first): use prefer, require, verify-ca or verify-full".into(),
        )),
        other => Err(StoreError::Config(format!(
            "sslmode={other} in the database URL is not a TLS mode: use disable, prefer, require, verify-ca or verify-full"
        ))),
    }
}

/// The `?query` of a `postgres://` URL: the URL without the TLS parameters, and their decoded
/// values.
fn split_query(url: &str) -> Result<(String, Vec<(String, String)>)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), vec![]));
    };
    let mut kept = Vec::new();
    let mut found = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if is_tls_key(key) {
            found.push((key.to_owned(), percent_decoded(value)?));
        } else {
            kept.push(pair);
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, found))
}

fn percent_decoded(value: &str) -> Result<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' => {
                let (Some(h), Some(l)) = (
                    bytes.get(i + 1).and_then(|&b| hex(b)),
                    bytes.get(i + 2).and_then(|&b| hex(b)),
                ) else {
                    return Err(StoreError::Config(format!(
                        "'{value}' in the database URL has a bad %-escape: write %XX with two hex digits"
                    )));
                };
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| {
        StoreError::Config(format!(
            "'{value}' in the database URL does not decode to UTF-8 text"
        ))
    })
}

/// The `key=value` form: the string without the TLS parameters, and their values. Each is
/// `key = value`, the value bare or single-quoted (`\'` and `\\` escaped), separated by
/// whitespace, as libpq reads it.
fn split_key_values(text: &str) -> Result<(String, Vec<(String, String)>)> {
    let bad = |why: &str| {
        StoreError::Config(format!(
            "storage.postgres.url is not a PostgreSQL URL ({why}): write it like postgres://user:password@host:5432/mira"
        ))
    };
    let chars: Vec<char> = text.chars().collect();
    let mut kept = String::new();
    let mut found = Vec::new();
    let mut i = 0;
    let skip_space = |i: &mut usize| {
        while chars.get(*i).is_some_and(|c| c.is_whitespace()) {
            *i += 1;
        }
    };
    loop {
        skip_space(&mut i);
        if i >= chars.len() {
            break;
        }
        let start = i;
        while chars
            .get(i)
            .is_some_and(|c| *c != '=' && !c.is_whitespace())
        {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        skip_space(&mut i);
        if chars.get(i) != Some(&'=') {
            return Err(bad(&format!("'{key}' has no '=' and value")));
        }
        i += 1;
        skip_space(&mut i);
        let mut value = String::new();
        if chars.get(i) == Some(&'\'') {
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(bad("a quoted value is not closed")),
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        if let Some(c) = chars.get(i + 1) {
                            value.push(*c);
                        }
                        i += 2;
                    }
                    Some(c) => {
                        value.push(*c);
                        i += 1;
                    }
                }
            }
        } else {
            while let Some(c) = chars.get(i).filter(|c| !c.is_whitespace()) {
                if *c == '\\' {
                    if let Some(n) = chars.get(i + 1) {
                        value.push(*n);
                    }
                    i += 2;
                } else {
                    value.push(*c);
                    i += 1;
                }
            }
        }
        if is_tls_key(&key) {
            found.push((key, value));
        } else {
            if !kept.is_empty() {
                kept.push(' ');
            }
            kept.extend(&chars[start..i.min(chars.len())]);
        }
    }
    Ok((kept, found))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(url: &str) -> (String, Option<TlsMode>, Option<String>) {
        let (rest, tls) = split_tls(url).unwrap();
        (
            rest,
            tls.mode,
            tls.root_cert.map(|p| p.display().to_string()),
        )
    }

    #[test]
    fn uri_parameters_are_taken_out() {
        assert_eq!(
            split("postgres://u:p@db:5432/mira?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca%20one.pem"),
            (
                "postgres://u:p@db:5432/mira?application_name=x".into(),
                Some(TlsMode::VerifyFull),
                Some("/etc/ca one.pem".into())
            )
        );
        assert_eq!(
            split("postgresql://u@db/mira?sslmode=require"),
            (
                "postgresql://u@db/mira".into(),
                Some(TlsMode::Require),
                None
            )
        );
        assert_eq!(
            split("postgres://u@db/mira"),
            ("postgres://u@db/mira".into(), None, None)
        );
    }

    #[test]
    fn key_value_parameters_are_taken_out() {
        assert_eq!(
            split("host=db sslmode = 'verify-ca' user=u sslrootcert='/my \\'ca\\'.pem' dbname=m"),
            (
                "host=db user=u dbname=m".into(),
                Some(TlsMode::VerifyCa),
                Some("/my 'ca'.pem".into())
            )
        );
        assert_eq!(
            split("host=db password='a b'"),
            ("host=db password='a b'".into(), None, None)
        );
    }

    #[test]
    fn unknown_or_unsafe_modes_are_refused() {
        for (url, says) in [
            ("postgres://db/m?sslmode=allow", "not supported"),
            ("postgres://db/m?sslmode=yes", "not a TLS mode"),
            ("postgres://db/m?sslrootcert=%zz", "bad %-escape"),
            ("host=db sslmode", "no '='"),
            ("host='db", "not closed"),
        ] {
            let e = split_tls(url).unwrap_err().to_string();
            assert!(e.contains(says), "{url}: {e}");
        }
    }
}
