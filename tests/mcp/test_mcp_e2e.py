"""End-to-end tests of `tether serve`'s MCP endpoint with the official MCP Python SDK (pinned in
requirements.txt) and raw HTTP for the paths a client library hides (401/403/404, restart).

Run by scripts/test after the Rust build; binaries come from TETHER_BIN_DIR (default target/debug).
Each test gets its own TETHER_HOME, a generated Cursor data dir and a server on 127.0.0.1:0.
"""

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("TETHER_BIN_DIR", ROOT / "target" / "debug"))
TOKEN = "e2e-token-0123456789abcdef"
B_SPLIT = "b2222222-0000-4000-8000-000000000001"
C_V10 = "c3333333-0000-4000-8000-000000000001"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Daemon:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        out = subprocess.run([BIN / "tether-fixture", tmp / "cursor"], check=True, capture_output=True, text=True)
        self.env = dict(os.environ, TETHER_HOME=str(tmp / "home"), TETHER_TOKEN=TOKEN, TETHER_LOG="warn")
        for line in out.stdout.splitlines():
            k, v = line.split("=", 1)
            self.env[k] = v
        self.proc = None
        self.port = 0

    def start(self, port: int = 0):
        self.proc = subprocess.Popen(
            [BIN / "tether", "serve", "--port", str(port)], env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        daemon_json = self.tmp / "home" / "daemon.json"
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                info = json.loads(daemon_json.read_text())
                if info["pid"] == self.proc.pid:
                    self.port = info["port"]
                    break
            except (OSError, ValueError, KeyError):
                pass
            assert self.proc.poll() is None, self.proc.stderr.read()
            time.sleep(0.05)
        else:
            raise AssertionError("daemon did not start")
        while time.time() < deadline:
            h = httpx.get(f"http://127.0.0.1:{self.port}/health").json()
            if h["index"]["state"] == "idle" and h["index"]["sessions"] > 0:
                return self
            time.sleep(0.05)
        raise AssertionError("initial index did not finish")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            assert self.proc.wait(timeout=20) == 0
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/mcp"

    def cli(self, *args, stdin=None):
        return subprocess.run([BIN / "tether", *args], env=self.env, input=stdin, capture_output=True, text=True,
                              timeout=30)

    def global_db(self):
        return Path(self.env["TETHER_CURSOR_DIR"]) / "globalStorage" / "state.vscdb"

    def append_bubble(self, composer: str, text: str):
        """Appends a user bubble the way Cursor does (split form: bubble row + header)."""
        db = sqlite3.connect(self.global_db())
        key = f"composerData:{composer}"
        data = json.loads(db.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()[0])
        bid = f"e2e-{time.time_ns()}"
        bubble = {"_v": 3, "type": 1, "bubbleId": bid, "text": text, "createdAt": "2026-11-22T10:00:00.000Z"}
        data["fullConversationHeadersOnly"].append({"bubbleId": bid, "type": 1})
        data["lastUpdatedAt"] = data.get("lastUpdatedAt", 0) + 1000
        with db:
            db.execute("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)", (f"bubbleId:{composer}:{bid}", json.dumps(bubble)))
            db.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (json.dumps(data), key))
        db.close()


def client(url, token=TOKEN, **kw):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return http, Client(streamable_http_client(url, http_client=http), mode="legacy", **kw)


def text_of(result):
    assert not result.is_error, result
    return json.loads(result.content[0].text)


def test_subscribed_session_gets_update_on_the_get_stream_and_others_do_not(daemon):
    async def go():
        got_a, got_b = asyncio.Queue(), asyncio.Queue()

        def handler(q):
            async def h(msg):
                root = getattr(msg, "root", msg)
                if getattr(root, "method", None) == "notifications/resources/updated":
                    await q.put(root.params.uri)
            return h

        http_a, a = client(daemon.url, message_handler=handler(got_a))
        http_b, b = client(daemon.url, message_handler=handler(got_b))
        async with http_a, a, http_b, b:
            uri = f"tether://session/{B_SPLIT}"
            await a.subscribe_resource(uri)
            await b.list_tools()
            await asyncio.sleep(0.3)  # the GET streams are open
            t0 = time.monotonic()
            daemon.append_bubble(B_SPLIT, "kingfisher flies in")
            assert await asyncio.wait_for(got_a.get(), 10) == uri
            latency = time.monotonic() - t0
            found = text_of(await a.call_tool("sessions_find", {"query": "kingfisher", "project": "all"}))
            assert found["hits"][0]["session_id"] == B_SPLIT
            await asyncio.sleep(0.5)
            assert got_b.empty(), "an unsubscribed session must not get the update"
            print(f"change → notification: {latency * 1000:.0f} ms")

    asyncio.run(go())


def test_refusals_and_session_lifecycle_over_raw_http(daemon):
    base = daemon.url
    auth = {"Authorization": f"Bearer {TOKEN}", **ACCEPT}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    r = httpx.post(base, json=init, headers=ACCEPT)
    assert r.status_code == 401 and "www-authenticate" not in r.headers
    r = httpx.post(base, json=init, headers={**auth, "Authorization": "Bearer wrong"})
    assert r.status_code == 401
    r = httpx.post(base, json=init, headers={**auth, "Origin": "http://evil.example"})
    assert r.status_code == 403
    r = httpx.post(base, json=init, headers={**auth, "Host": "evil.example"})
    assert r.status_code == 403
    r = httpx.post(base, json=[init], headers=auth)
    assert r.status_code in (400, 415), r.status_code
    r = httpx.post(base, content=b"x" * (2 << 20), headers=auth)
    assert r.status_code == 413
    r = httpx.post(base, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   headers={**auth, "Mcp-Session-Id": "not-a-session"})
    assert r.status_code == 404

    r = httpx.post(base, json=init, headers=auth)
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    assert '"protocolVersion":"2025-06-18"' in r.text
    s = {**auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
    assert httpx.post(base, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=s).status_code == 202
    health = httpx.get(base.replace("/mcp", "/health")).json()
    assert health["mcp_sessions"] >= 0 and "token" not in json.dumps(health).lower()

    # The daemon restarts; the same session id keeps working.
    port = daemon.port
    daemon.stop()
    daemon.start(port)
    r = httpx.post(base, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=s)
    assert r.status_code == 200 and "sessions_find" in r.text, (r.status_code, r.text)

    assert httpx.delete(base, headers=s).status_code == 204
    r = httpx.post(base, json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, headers=s)
    assert r.status_code == 404


def test_hooks_bind_the_calling_chat_and_fail_open(daemon):
    payload = {"conversation_id": C_V10, "generation_id": "g1", "hook_event_name": "beforeMCPExecution",
               "workspace_roots": ["/home/u/cproj"], "tool_name": "session_tag", "tool_input": {"add_tags": ["mine"]}}
    r = daemon.cli("hook", "beforeMCPExecution", stdin=json.dumps(payload))
    assert r.returncode == 0 and json.loads(r.stdout) == {"permission": "allow"}, r

    async def go():
        http, c = client(daemon.url)
        async with http, c:
            tagged = text_of(await c.call_tool("session_tag", {"add_tags": ["mine"]}))
            assert tagged["id"] == C_V10 and tagged["tags"] == ["mine"]
            # Later calls from the same MCP session stay bound to that chat.
            again = text_of(await c.call_tool("session_tag", {"bookmark": True}))
            assert again["id"] == C_V10 and again["bookmarked"]

    asyncio.run(go())

    # No daemon: the hook still answers at once and exits 0.
    dead = dict(daemon.env, TETHER_HOME=str(daemon.tmp / "nobody"))
    t0 = time.monotonic()
    r = subprocess.run([BIN / "tether", "hook", "beforeSubmitPrompt"], env=dead, input="{}", capture_output=True,
                       text=True, timeout=10)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0 and json.loads(r.stdout) == {"continue": True}
    assert elapsed < 1.0, f"fail-open hook took {elapsed:.2f}s"
    r = subprocess.run([BIN / "tether", "hook", "stop"], env=daemon.env, input="not json", capture_output=True,
                       text=True, timeout=10)
    assert r.returncode == 0 and r.stdout.strip() == "{}"


def test_stdio_mode_serves_the_same_tools(daemon):
    async def go():
        params = StdioServerParameters(command=str(BIN / "tether"), args=["mcp", "stdio"], env=daemon.env)
        async with Client(params, mode="legacy") as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert "sessions_find" in names
            found = text_of(await c.call_tool("sessions_find", {"query": "narwhal", "project": "all"}))
            assert found["hits"][0]["session_id"] == B_SPLIT

    asyncio.run(go())
