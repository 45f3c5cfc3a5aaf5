"""`tether serve` tried the way another local user, or a careless client, would: session ends
answered as the SDK expects, unknown sessions and routes answered precisely, the hook door
checking its token before reading anything, idle and slow connections closed, and many of them
not starving /health.
"""

import asyncio
import logging
import resource
import socket
import time

import httpx

from test_mcp_e2e import ACCEPT, TOKEN, client

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def test_session_end_unknown_sessions_and_routes(daemon):
    auth = {"Authorization": f"Bearer {TOKEN}", **ACCEPT}
    r = httpx.post(daemon.url, json=INIT, headers=auth)
    sid = r.headers["mcp-session-id"]
    s = {**auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
    httpx.post(daemon.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=s)
    assert httpx.delete(daemon.url, headers=s).status_code == 204
    assert httpx.delete(daemon.url, headers={**s, "Mcp-Session-Id": "never-was"}).status_code == 404
    r = httpx.post(daemon.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   headers={**auth, "Mcp-Session-Id": "phantom-session"})
    assert r.status_code == 404
    status = httpx.get(daemon.url.replace("/mcp", "/api/status"), headers={"Authorization": f"Bearer {TOKEN}"}).json()
    ids = [m["id"] for m in status["mcp_sessions"]]
    assert "phantom-session" not in ids and sid not in ids, ids

    base = daemon.url.replace("/mcp", "")
    r = httpx.put(f"{base}/api/tasks", headers={"Authorization": f"Bearer {TOKEN}", "X-Tether": "1"})
    assert r.status_code == 405 and r.json()["message"], r.text
    r = httpx.get(f"{base}/{'x' * 300}")
    assert r.status_code == 404 and r.json()["code"] == "not_found"


def test_the_python_sdk_ends_its_session_quietly(daemon, caplog):
    """The official client ends its session with DELETE on exit; it warns unless that succeeds."""
    async def go():
        http, c = client(daemon.url)
        async with http, c:
            await c.list_tools()

    with caplog.at_level(logging.WARNING, logger="mcp"):
        asyncio.run(go())
    assert not [r.getMessage() for r in caplog.records if "termination" in r.getMessage()], caplog.text


def test_the_hook_door_reads_nothing_without_its_token(daemon):
    pid = daemon.proc.pid
    hook = daemon.url.replace("/mcp", "/hook")
    before = rss_kb(pid)
    big = b"{" + b" " * (2 << 20) + b"}"
    t0 = time.monotonic()
    for _ in range(40):
        r = httpx.post(hook, content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 401
    assert time.monotonic() - t0 < 30
    grew = rss_kb(pid) - before
    assert grew < 40_000, f"the daemon grew by {grew} KB answering unauthenticated hook posts"
    token = (daemon.tmp / "home" / "hook-token").read_text().strip()
    r = httpx.post(hook, content=big, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 413


def test_idle_connections_are_closed_and_do_not_starve_health(daemon):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    port = daemon.port
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(1100)]
    try:
        t0 = time.monotonic()
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).json()["status"] == "ok"
        assert time.monotonic() - t0 < 2, "health answers beside 1,100 idle connections"
        # A client that never sends its headers is let go.
        slow = idle[0]
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow.settimeout(20)
        t0 = time.monotonic()
        data = slow.recv(1024)
        assert data == b"" or b"408" in data, data
        assert time.monotonic() - t0 < 15
    finally:
        for s in idle:
            s.close()
