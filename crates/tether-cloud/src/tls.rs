//! The process's TLS crypto provider for reqwest.

/// Installs the process's one TLS crypto provider (ring) for every HTTP client it builds. reqwest
/// is built with `rustls-no-provider` (ring builds faster than aws-lc), so a binary that builds
/// any reqwest client — ours, or one inside a library such as rmcp's — calls this first; it is
/// idempotent and cheap.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
