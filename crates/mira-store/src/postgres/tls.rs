//! TLS to the PostgreSQL server, by rustls: off, on without checking the server (libpq's
//! `require`), or on with the server's certificate checked by the platform's verifier (libpq's
//! `verify-full`: the chain and the host name).

use crate::{Result, StoreError};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// `storage.postgres.tls`: `disable`, `require` or `verify-full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TlsMode {
    /// Plain TCP (a server on the same host or a private network).
    #[default]
    Disable,
    /// Encrypted, the server's certificate not checked (as libpq's `sslmode=require`).
    Require,
    /// Encrypted, the certificate checked against the system's trusted roots and the host name
    /// (as libpq's `sslmode=verify-full`).
    VerifyFull,
}

impl TlsMode {
    /// The client's SSL mode.
    pub(super) fn ssl_mode(self) -> postgres::config::SslMode {
        match self {
            TlsMode::Disable => postgres::config::SslMode::Disable,
            TlsMode::Require | TlsMode::VerifyFull => postgres::config::SslMode::Require,
        }
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The connector of `mode` (unused when TLS is off, but the pool has one type).
pub(super) fn connector(mode: TlsMode) -> Result<MakeRustlsConnect> {
    let tls_error = |e: rustls::Error| StoreError::Config(format!("TLS cannot be set up: {e}"));
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?;
    let config = match mode {
        TlsMode::VerifyFull => {
            use rustls_platform_verifier::BuilderVerifierExt;
            builder
                .with_platform_verifier()
                .map_err(tls_error)?
                .with_no_client_auth()
        }
        TlsMode::Disable | TlsMode::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider())))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
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
