use tether_testkit::daemon::TestDaemon;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_daemon_answers_http_and_mcp() {
    let d = TestDaemon::start().await;
    let (status, health) = d.get("/health").await;
    assert_eq!(status, 200, "{health}");
    let mcp = d.mcp().await;
    let tools = mcp.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "task_create"), "{tools:?}");
    mcp.cancel().await.unwrap();
    d.stop().await;
}
