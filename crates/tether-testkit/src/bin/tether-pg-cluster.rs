//! `tether-pg-cluster [--tls]`: a throwaway PostgreSQL cluster for tests outside Rust (the GUI's
//! end-to-end tests) and for trying team mode by hand: prints one JSON line, `{"url": …,
//! "password": …}` (a fresh database of its own), then keeps the cluster running until its
//! standard input closes, and removes it. With `--tls` the cluster takes TLS only, and the line
//! also gives its CA, and a URL for a user that signs in with the client certificate it names.

use std::io::Read;

use tether_testkit::pg::{CERT_USER, Cluster, PASSWORD};

fn main() {
    let tls = std::env::args().any(|a| a == "--tls");
    let cluster = if tls { Cluster::start_tls() } else { Cluster::start() };
    let url = cluster.database();
    let mut line = serde_json::json!({"url": url, "password": PASSWORD});
    if tls {
        cluster.psql("postgres", &format!("CREATE DATABASE certs OWNER {CERT_USER}"));
        let ca = cluster.ca_file();
        let (cert, key) = cluster.client_cert_files(false);
        line["ca"] = ca.display().to_string().into();
        line["cert_url"] = format!(
            "postgres://{CERT_USER}@127.0.0.1:{}/certs?sslmode=verify-full&sslrootcert={}",
            cluster.port,
            ca.display()
        )
        .into();
        line["client_cert"] = cert.display().to_string().into();
        line["client_key"] = key.display().to_string().into();
    }
    println!("{line}");
    // Until whoever started it closes our stdin (or dies, which closes it too).
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(cluster);
}
