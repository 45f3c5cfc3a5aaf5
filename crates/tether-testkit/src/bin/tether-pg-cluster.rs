//! `tether-pg-cluster`: a throwaway PostgreSQL cluster for tests outside Rust (the GUI's
//! end-to-end tests): prints one JSON line, `{"url": …, "password": …}` (a fresh database of its
//! own), then keeps the cluster running until its standard input closes, and removes it.

use std::io::Read;

fn main() {
    let cluster = tether_testkit::pg::Cluster::start();
    let url = cluster.database();
    println!("{}", serde_json::json!({"url": url, "password": tether_testkit::pg::PASSWORD}));
    // Until whoever started it closes our stdin (or dies, which closes it too).
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(cluster);
}
