//! TLS to PostgreSQL as the URL says, against a stand-in server that speaks just enough of the
//! protocol: it accepts TLS (with `tls/server.pem`, for `localhost`, signed by `tls/ca.pem`),
//! then answers the start-up with an error naming how it was reached. Reaching that error
//! means the handshake was accepted; a certificate error means the client refused the server.
//!
//! The fixtures were made with OpenSSL: a P-256 CA (`CA:TRUE`, valid 100 years) and a server
//! certificate it signed (`subjectAltName=DNS:localhost`, `CA:FALSE`), its key in PKCS#8.

use mira_store::{PgOptions, PgStore, StoreError, TlsMode};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/tls")).join(name)
}

/// The message the stand-in answers a start-up with, over TLS or not.
const OVER_TLS: &str = "stand-in server reached over TLS";
const IN_PLAIN_TEXT: &str = "stand-in server reached in plain text";

/// A PostgreSQL `ErrorResponse` (FATAL) with `message`.
fn error_response(message: &str) -> Vec<u8> {
    let mut fields = Vec::new();
    for (code, value) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', "28000"),
        (b'M', message),
    ] {
        fields.push(code);
        fields.extend_from_slice(value.as_bytes());
        fields.push(0);
    }
    fields.push(0);
    let mut out = vec![b'E'];
    out.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
    out.extend(fields);
    out
}

/// Reads one length-prefixed start-up packet (its length included).
fn read_packet(s: &mut impl Read) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let n = (u32::from_be_bytes(len) as usize).checked_sub(4)?;
    let mut body = vec![0u8; n];
    s.read_exact(&mut body).ok()?;
    Some(body)
}

/// Serves one client: TLS when it asks (`SSLRequest`), then the error.
fn serve_one(mut tcp: TcpStream, config: Arc<rustls::ServerConfig>) {
    let Some(first) = read_packet(&mut tcp) else {
        return;
    };
    if first == [0x04, 0xd2, 0x16, 0x2f] {
        if tcp.write_all(b"S").is_err() {
            return;
        }
        let Ok(conn) = rustls::ServerConnection::new(config) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        if read_packet(&mut tls).is_some() {
            let _ = tls.write_all(&error_response(OVER_TLS));
            let _ = tls.flush();
        }
    } else {
        let _ = tcp.write_all(&error_response(IN_PLAIN_TEXT));
    }
}

/// Starts the stand-in on a free loopback port; returns the port.
fn stand_in() -> u16 {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(fixture("server.pem"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).unwrap();
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || serve_one(tcp, config));
        }
    });
    port
}

/// What opening a store at `url` says (it never opens: the stand-in refuses every start-up).
fn attempt(url: &str, tls: Option<TlsMode>) -> String {
    let opts = PgOptions {
        url: url.to_owned(),
        tls,
        connect_timeout: std::time::Duration::from_secs(5),
        ..PgOptions::default()
    };
    match PgStore::open(&opts) {
        Ok(_) => panic!("{url}: the stand-in accepted a start-up"),
        Err(e @ (StoreError::Unreachable { .. } | StoreError::Config(_))) => e.to_string(),
        Err(e) => panic!("{url}: unexpected error {e}"),
    }
}

#[test]
fn tls_modes_check_the_server_as_the_url_says() {
    let port = stand_in();
    let ca = fixture("ca.pem").display().to_string();
    let at = |host: &str, query: &str| format!("postgres://mira@{host}:{port}/mira?{query}");
    let reached = |url: String| {
        let said = attempt(&url, None);
        assert!(said.contains(OVER_TLS), "{url}: {said}");
    };
    let refused = |url: String, why: &str| {
        let said = attempt(&url, None);
        assert!(
            !said.contains(OVER_TLS) && !said.contains(IN_PLAIN_TEXT) && said.contains(why),
            "{url}: {said}"
        );
    };
    // Encrypted, the server not checked.
    reached(at("127.0.0.1", "sslmode=require"));
    // libpq's default: TLS when the server offers it.
    reached(at("127.0.0.1", ""));
    // The test CA is no system root: verify-full refuses the server...
    refused(at("localhost", "sslmode=verify-full"), "certificate");
    // ...unless the URL names it; the host name must then match the certificate...
    reached(at(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ));
    refused(
        at(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        "certificate",
    );
    // ...which verify-ca does not check (nor require with a root, as libpq).
    reached(at(
        "127.0.0.1",
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    ));
    reached(at(
        "127.0.0.1",
        &format!("sslmode=require&sslrootcert={ca}"),
    ));
    // A root file that does not exist is named.
    refused(
        at(
            "localhost",
            "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        ),
        "/nonexistent/ca.pem",
    );
    // Plain text only when asked for.
    let said = attempt(&at("127.0.0.1", "sslmode=disable"), None);
    assert!(said.contains(IN_PLAIN_TEXT), "{said}");
    // The config's mode applies when the URL says none, and must agree when it says one.
    let said = attempt(&at("localhost", ""), Some(TlsMode::VerifyFull));
    assert!(said.contains("certificate"), "{said}");
    let said = attempt(&at("localhost", "sslmode=require"), Some(TlsMode::Disable));
    assert!(
        said.contains("storage.postgres.tls is disable") && said.contains("sslmode=require"),
        "{said}"
    );
}
