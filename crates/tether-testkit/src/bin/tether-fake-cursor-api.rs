//! `tether-fake-cursor-api`: the fake of Cursor's Cloud Agents API (see
//! `tether_testkit::cursor_api`) as a process, for tests that run the real `tether` binary, the
//! GUI or the desktop app against it. Prints its base URL on the first line of stdout, then
//! serves until killed.
//!
//! Usage: `tether-fake-cursor-api --key KEY [--port N]`

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let key = arg("--key").unwrap_or_else(|| "fake-cursor-key".into());
    let port: u16 = arg("--port").and_then(|p| p.parse().ok()).unwrap_or(0);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        println!("http://{}", listener.local_addr()?);
        use std::io::Write;
        std::io::stdout().flush()?;
        tether_testkit::cursor_api::serve(listener, key).await
    })
}
