//! TLS to the PostgreSQL server, by rustls, with libpq's modes: off (`disable`), opportunistic
//! (`prefer`: encrypted when the server offers it, the server not checked), encrypted without
//! checking the server (`require`), encrypted with the certificate chain checked (`verify-ca`),
//! and with the host name checked too (`verify-full`). The trusted roots are the file of
//! `sslrootcert` (`storage.postgres.tls_root_cert`) when one is given, else the system's.
//!
//! The mode comes from the URL's `sslmode` or from `storage.postgres.tls`; when both are given
//! they must agree (a URL copied from a managed database says what it needs, and a config that
//! says otherwise is an error rather than silently winning). Neither: `prefer`, libpq's default.

use crate::{Result, StoreError};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// `storage.postgres.tls` and the URL's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TlsMode {
    /// Plain TCP (a server on the same host or a private network).
    Disable,
    /// Encrypted when the server offers it, plain otherwise; the server is not checked (libpq's
    /// default).
    Prefer,
    /// Encrypted, the server's certificate not checked.
    Require,
    /// Encrypted, the certificate chain checked against the trusted roots (not the host name).
    VerifyCa,
    /// Encrypted, the certificate chain and the host name checked.
    VerifyFull,
}

impl TlsMode {
    /// The word the URL and the config use.
    pub fn as_str(self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Prefer => "prefer",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }

    /// The client's SSL mode.
    pub(super) fn ssl_mode(self) -> postgres::config::SslMode {
        match self {
            TlsMode::Disable => postgres::config::SslMode::Disable,
            TlsMode::Prefer => postgres::config::SslMode::Prefer,
            TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull => {
                postgres::config::SslMode::Require
            }
        }
    }

    /// Whether the connection must be encrypted (no plain-text fallback).
    pub(super) fn required(self) -> bool {
        matches!(
            self,
            TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull
        )
    }
}

/// What a URL says about TLS (read by `super::url`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct UrlTls {
    /// `sslmode`, when given.
    pub mode: Option<TlsMode>,
    /// `sslrootcert`, when given.
    pub root_cert: Option<PathBuf>,
}

/// The TLS a connection uses: the mode and the roots it trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tls {
    pub mode: TlsMode,
    pub root_cert: Option<PathBuf>,
}

/// The TLS of a connection from the config (`storage.postgres.tls`, `tls_root_cert`) and the
/// URL (`sslmode`, `sslrootcert`): they must agree where both speak. As libpq, `require` with
/// a root certificate checks the chain (`verify-ca`).
pub(super) fn resolve(
    config_mode: Option<TlsMode>,
    config_root: Option<&Path>,
    url: UrlTls,
) -> Result<Tls> {
    if let (Some(c), Some(u)) = (config_mode, url.mode) {
        if c != u {
            return Err(StoreError::Config(format!(
                "storage.postgres.tls is {} but the database URL (storage.postgres.url or MIRA_DATABASE_URL) says sslmode={}: make them agree, or remove one of them",
                c.as_str(),
                u.as_str()
            )));
        }
    }
    if let (Some(c), Some(u)) = (config_root, url.root_cert.as_deref()) {
        if c != u {
            return Err(StoreError::Config(format!(
                "storage.postgres.tls_root_cert is {} but the database URL says sslrootcert={}: make them agree, or remove one of them",
                c.display(),
                u.display()
            )));
        }
    }
    let root_cert = url.root_cert.or_else(|| config_root.map(Path::to_path_buf));
    let mode = match url.mode.or(config_mode).unwrap_or(TlsMode::Prefer) {
        TlsMode::Require if root_cert.is_some() => TlsMode::VerifyCa,
        m => m,
    };
    Ok(Tls { mode, root_cert })
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The connector of `tls` (unused when TLS is off, but the pool has one type).
pub(super) fn connector(tls: &Tls) -> Result<MakeRustlsConnect> {
    let tls_error = |e: rustls::Error| StoreError::Config(format!("TLS cannot be set up: {e}"));
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?;
    let verifier: Arc<dyn ServerCertVerifier> = match tls.mode {
        TlsMode::Disable | TlsMode::Prefer | TlsMode::Require => Arc::new(Unchecked(provider())),
        TlsMode::VerifyCa => Arc::new(ChainOnly(checked(tls.root_cert.as_deref())?)),
        TlsMode::VerifyFull => checked(tls.root_cert.as_deref())?,
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// The verifier of the certificate chain and the host name: against the roots of `root_cert`
/// (a PEM file), or the system's.
fn checked(root_cert: Option<&Path>) -> Result<Arc<dyn ServerCertVerifier>> {
    let Some(path) = root_cert else {
        let v = rustls_platform_verifier::Verifier::new(provider()).map_err(|e| {
            StoreError::Config(format!(
                "the system's trusted certificates cannot be read: {e}"
            ))
        })?;
        return Ok(Arc::new(v));
    };
    let cannot = |why: String| {
        StoreError::Config(format!(
            "the root certificate file {} (sslrootcert / storage.postgres.tls_root_cert) cannot be used: {why}",
            path.display()
        ))
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| cannot(e.to_string()))? {
        roots
            .add(cert.map_err(|e| cannot(e.to_string()))?)
            .map_err(|e| cannot(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(cannot("it holds no PEM certificate".into()));
    }
    let v = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .map_err(|e| cannot(e.to_string()))?;
    Ok(v)
}

/// `verify-ca`: the chain checked by the inner verifier, a certificate for another host name
/// accepted (libpq's meaning: the server holds a certificate the trusted roots signed).
#[derive(Debug)]
struct ChainOnly(Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// Accepts any certificate (the connection is encrypted but the server not authenticated), and
/// still checks the handshake's signatures.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(mode: Option<TlsMode>, root: Option<&str>) -> UrlTls {
        UrlTls {
            mode,
            root_cert: root.map(PathBuf::from),
        }
    }

    #[test]
    fn the_url_and_the_config_agree_or_fail() {
        let t = |c, u| resolve(c, None, url(u, None)).map(|t| t.mode);
        assert_eq!(t(None, None).unwrap(), TlsMode::Prefer);
        assert_eq!(t(None, Some(TlsMode::Require)).unwrap(), TlsMode::Require);
        assert_eq!(
            t(Some(TlsMode::VerifyFull), None).unwrap(),
            TlsMode::VerifyFull
        );
        assert_eq!(
            t(Some(TlsMode::Require), Some(TlsMode::Require)).unwrap(),
            TlsMode::Require
        );
        let e = t(Some(TlsMode::Disable), Some(TlsMode::Require))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("storage.postgres.tls is disable") && e.contains("sslmode=require"),
            "{e}"
        );
        let e = resolve(None, Some(Path::new("/a.pem")), url(None, Some("/b.pem")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/a.pem") && e.contains("sslrootcert=/b.pem"),
            "{e}"
        );
        let ca = resolve(None, None, url(Some(TlsMode::Require), Some("/ca.pem"))).unwrap();
        assert_eq!(
            ca.mode,
            TlsMode::VerifyCa,
            "require with a root checks the chain"
        );
    }

    #[test]
    fn a_missing_root_file_is_named() {
        let tls = Tls {
            mode: TlsMode::VerifyFull,
            root_cert: Some(PathBuf::from("/nonexistent/ca.pem")),
        };
        let e = connector(&tls).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }
}
