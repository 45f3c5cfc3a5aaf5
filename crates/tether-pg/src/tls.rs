//! TLS to the team database as libpq's `sslmode` says, on rustls (the process's one TLS stack,
//! with ring): `disable` never; `allow` and `prefer` when the server offers it; `require`
//! always, and its certificate checked against a root certificate only when one is there (as
//! libpq does); `verify-ca` checked against the root certificate; `verify-full` that and the
//! host name. The root certificate is `sslrootcert` (a file, or `system` for the OS's roots),
//! else `~/.postgresql/root.crt`; a client certificate is the one Tether keeps for the team (a
//! [`ClientIdentity`], from the OS keyring), else `sslcert` + `sslkey`, else
//! `~/.postgresql/postgresql.crt` and `.key` when both are there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The TLS parts of a connection string, and the client certificate kept apart from it.
#[derive(Debug, Clone, Default)]
pub(crate) struct TlsSettings {
    pub(crate) mode: String,
    pub(crate) rootcert: Option<String>,
    pub(crate) cert: Option<PathBuf>,
    pub(crate) key: Option<PathBuf>,
    pub(crate) identity: Option<ClientIdentity>,
}

/// A client certificate chain and its private key, as PEM text (the certificates, then the key):
/// what the keyring holds for the team database. Its `Debug` never shows the key.
#[derive(Clone)]
pub struct ClientIdentity(String);

impl std::fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientIdentity(…)")
    }
}

impl ClientIdentity {
    /// Checks that `pem` holds at least one certificate and one private key.
    pub fn parse(pem: &str) -> Result<ClientIdentity, String> {
        let id = ClientIdentity(pem.trim().to_owned() + "\n");
        id.parts()?;
        Ok(id)
    }

    /// A certificate and its key as a person gives them: two PEM files, or one holding both.
    pub fn from_files(cert: &str, key: Option<&str>) -> Result<ClientIdentity, String> {
        match key {
            Some(key) => Self::parse(&format!("{}\n{}", cert.trim(), key.trim())),
            None => Self::parse(cert),
        }
    }

    /// The PEM text, to keep (in the keyring, never in a file Tether writes in plain).
    pub fn pem(&self) -> &str {
        &self.0
    }

    fn parts(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
        let chain = CertificateDer::pem_slice_iter(self.0.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("the client certificate: {e}"))?;
        if chain.is_empty() {
            return Err("the client certificate: no CERTIFICATE block in it".into());
        }
        let key = PrivateKeyDer::from_pem_slice(self.0.as_bytes())
            .map_err(|e| format!("the client certificate's private key: {e}"))?;
        Ok((chain, key))
    }
}

/// The libpq options this module reads out of a connection string (the driver knows none of
/// `sslrootcert`, `sslcert`, `sslkey`, and only three of `sslmode`'s six values).
pub(crate) const OPTIONS: &[&str] = &["sslmode", "sslrootcert", "sslcert", "sslkey"];

impl TlsSettings {
    /// What the driver itself is told: whether to ask for TLS, and whether to insist.
    pub(crate) fn driver_mode(&self) -> SslMode {
        match self.mode.as_str() {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            _ => SslMode::Require,
        }
    }

    /// The connector for a session: rustls with the checks this mode asks for.
    pub(crate) fn connector(&self) -> Result<MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = self.roots()?;
        let verifier: Arc<dyn ServerCertVerifier> = match (self.mode.as_str(), roots) {
            ("verify-ca" | "verify-full", None) => {
                return Err(format!(
                    "sslmode={} needs the server's root certificate: give sslrootcert=FILE (or sslrootcert=system), or put it in ~/.postgresql/root.crt",
                    self.mode
                ));
            }
            (mode, Some(roots)) if mode != "disable" => {
                let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                    .build()
                    .map_err(|e| format!("the root certificate: {e}"))?;
                if mode == "verify-full" {
                    webpki
                } else {
                    Arc::new(Lenient { chain: Some(webpki), provider: Arc::clone(&provider) })
                }
            }
            _ => Arc::new(Lenient { chain: None, provider: Arc::clone(&provider) }),
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match self.client_identity()? {
            Some((chain, key)) => {
                builder.with_client_auth_cert(chain, key).map_err(|e| format!("the client certificate: {e}"))?
            }
            None => builder.with_no_client_auth(),
        };
        Ok(MakeRustlsConnect::new(config))
    }

    /// The root certificates to check the server's against: `None` when there are none to use.
    fn roots(&self) -> Result<Option<rustls::RootCertStore>, String> {
        let mut store = rustls::RootCertStore::empty();
        match self.rootcert.as_deref() {
            Some("system") => {
                let found = rustls_native_certs::load_native_certs();
                store.add_parsable_certificates(found.certs);
                if store.is_empty() {
                    return Err("sslrootcert=system: this machine has no root certificates".into());
                }
            }
            Some(file) => add_pem(&mut store, Path::new(file))?,
            None => match home_file("root.crt") {
                Some(default) if default.is_file() => add_pem(&mut store, &default)?,
                _ => return Ok(None),
            },
        }
        Ok(Some(store))
    }

    fn client_identity(&self) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
        if let Some(id) = &self.identity {
            return id.parts().map(Some);
        }
        let (cert, key) = match (&self.cert, &self.key) {
            (Some(c), Some(k)) => (c.clone(), k.clone()),
            (Some(_), None) | (None, Some(_)) => return Err("give both sslcert and sslkey".into()),
            (None, None) => match (home_file("postgresql.crt"), home_file("postgresql.key")) {
                (Some(c), Some(k)) if c.is_file() && k.is_file() => (c, k),
                _ => return Ok(None),
            },
        };
        let chain = CertificateDer::pem_file_iter(&cert)
            .and_then(|i| i.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("reading the client certificate {}: {e}", cert.display()))?;
        let key =
            PrivateKeyDer::from_pem_file(&key).map_err(|e| format!("reading the client key {}: {e}", key.display()))?;
        Ok(Some((chain, key)))
    }
}

fn home_file(name: &str) -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".postgresql").join(name))
}

fn add_pem(store: &mut rustls::RootCertStore, file: &Path) -> Result<(), String> {
    let certs = CertificateDer::pem_file_iter(file)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("reading the root certificate {}: {e}", file.display()))?;
    let (added, _) = store.add_parsable_certificates(certs);
    if added == 0 {
        return Err(format!("{} holds no usable certificate", file.display()));
    }
    Ok(())
}

/// Less than `verify-full`, as libpq does it: with `chain`, the server's certificate must lead
/// to the root certificate but the name in it is not checked (`verify-ca`, and `require` when a
/// root certificate is there); without, it is not checked at all (`require`, `prefer`). The
/// handshake's signatures are verified either way.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(Error::InvalidCertificate(CertificateError::NotValidForName))
            | Err(Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
