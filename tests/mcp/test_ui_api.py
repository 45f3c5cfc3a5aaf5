"""The GUI's JSON API and event stream on `tether serve` (docs/api.md), over real HTTP: the
one-time login link from `tether open --print`, the guards (cookie or bearer, `X-Tether: 1`,
Origin/Host), and each route against the generated Cursor data.
"""

import json
import os
import threading
import time

import httpx

from test_mcp_e2e import B_SPLIT, TOKEN, Daemon

BEARER = {"Authorization": f"Bearer {TOKEN}"}
WRITE = {"X-Tether": "1"}


def base(daemon):
    return daemon.url.removesuffix("/mcp")


def logged_in(daemon):
    link = daemon.cli("open", "--print")
    assert link.returncode == 0, link.stderr
    url = link.stdout.strip()
    assert url.startswith(base(daemon) + "/login?code=")
    c = httpx.Client(base_url=base(daemon))
    r = c.get(url.removeprefix(base(daemon)))
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert c.get(url.removeprefix(base(daemon))).status_code == 401, "a login link works once"
    return c


def test_login_and_guards(daemon):
    b = base(daemon)
    r = httpx.get(f"{b}/api/sessions")
    assert r.status_code == 401 and "tether open" in r.json()["message"]
    # Only token holders may mint login links.
    assert httpx.post(f"{b}/api/login-code", headers=WRITE).status_code == 401
    c = logged_in(daemon)
    assert c.get("/api/sessions").status_code == 200
    r = c.patch(f"/api/sessions/{B_SPLIT}", json={"bookmarked": True})
    assert r.status_code == 403 and "X-Tether" in r.json()["message"]
    assert c.get("/api/tags", headers={"Origin": "http://evil.example"}).status_code == 403
    assert c.get("/api/tags", headers={"Host": "evil.example"}).status_code == 403
    assert c.post("/api/login-code", headers=WRITE).status_code == 401, "a cookie cannot mint more links"
    assert httpx.get(f"{b}/api/status", headers=BEARER).json()["url"] == daemon.url


def test_sessions_search_tag_export_and_tags(daemon):
    c = logged_in(daemon)
    rows = c.get("/api/sessions", params={"limit": 100}).json()["sessions"]
    assert any(s["id"] == B_SPLIT for s in rows)
    assert all(s["source"] == "cli" for s in c.get("/api/sessions", params={"source": "cli"}).json()["sessions"])
    hit = c.get("/api/search", params={"q": "narwhal"}).json()["hits"][0]
    assert hit["session_id"] == B_SPLIT and "\u0002narwhal\u0003" in hit["snippet"]
    bad = c.get("/api/search", params={"q": '"unbalanced'})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_input"

    d = c.get(f"/api/sessions/{B_SPLIT}", params={"tools": 1}).json()
    assert d["id"] == B_SPLIT and d["messages"]
    assert c.get("/api/sessions/nope").json()["code"] == "not_found"

    s = c.patch(f"/api/sessions/{B_SPLIT}", headers=WRITE,
                json={"nickname": "narwhal", "add_tags": ["dates", "bug"], "bookmarked": True}).json()
    assert s["nickname"] == "narwhal" and s["tags"] == ["bug", "dates"] and s["bookmarked"]
    cleared = c.patch(f"/api/sessions/{B_SPLIT}", headers=WRITE, json={"nickname": None}).json()
    assert cleared["nickname"] is None and cleared["tags"] == ["bug", "dates"]

    e = c.get(f"/api/sessions/{B_SPLIT}/export", params={"format": "html"})
    assert e.status_code == 200 and "attachment" in e.headers["content-disposition"] and "<html" in e.text.lower()

    assert {p["path"] for p in c.get("/api/projects").json()["projects"]}
    merged = c.post("/api/tags/rename", headers=WRITE, json={"from": "bug", "to": "dates"}).json()
    assert merged == {"tag": "dates", "sessions": 1}
    assert c.delete("/api/tags/dates", headers=WRITE).json() == {"removed_from": 1}
    assert c.get("/api/tags").json()["tags"] == []


def person():
    return os.environ.get("TETHER_USER") or os.environ.get("USER") or os.environ.get("USERNAME") or "me"


def test_tasks_agents_doctor_and_live_events(daemon):
    c = logged_in(daemon)
    events = []

    def listen():
        with httpx.stream("GET", f"{base(daemon)}/api/events", headers=BEARER, timeout=15) as r:
            name = None
            for line in r.iter_lines():
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    events.append((name, json.loads(line[6:])))
                    if name == "tasks":
                        return

    t = threading.Thread(target=listen, daemon=True)
    t.start()
    time.sleep(0.5)
    r = daemon.cli("task", "add", "Made at the CLI", "--as", "pat")
    assert r.returncode == 0, r.stderr
    t.join(10)
    assert ("hello", {"version": events[0][1]["version"]}) == events[0]
    assert any(n == "tasks" for n, _ in events), events

    a = c.post("/api/tasks", headers=WRITE, json={"title": "Board work", "priority": "high"}).json()
    dep = c.post("/api/tasks", headers=WRITE, json={"title": "After", "depends_on": [a["id"]]}).json()
    moved = c.patch(f"/api/tasks/{dep['id']}", headers=WRITE, json={"status": "in_progress"})
    assert moved.status_code == 409 and moved.json()["code"] == "dependencies_open"
    claimed = c.post(f"/api/tasks/{a['id']}/claim", headers=WRITE).json()
    # The GUI acts as the person the CLI does (TETHER_USER, else the login name).
    assert claimed["status"] == "in_progress" and claimed["assignee"] == person()
    c.patch(f"/api/tasks/{a['id']}", headers=WRITE, json={"comment": "handing over", "handoff": True, "release": True})
    detail = c.get(f"/api/tasks/{a['id']}").json()
    assert detail["notes"][0]["kind"] == "handoff" and detail["status"] == "todo"
    listed = c.get("/api/tasks", params=[("status", "todo"), ("status", "done")]).json()["tasks"]
    assert {t["title"] for t in listed} >= {"Board work", "After", "Made at the CLI"}
    assert {a["name"] for a in c.get("/api/agents").json()["agents"]} >= {"pat", person()}
    doc = c.get("/api/doctor").json()
    assert doc["sources"] and all(s["status"] in ("complete", "partial", "error") for s in doc["sources"])

    r = c.post("/api/index", headers=WRITE)
    assert r.status_code == 202


def test_rotating_the_token_from_the_gui_takes_effect_at_once(tmp_path):
    d = Daemon(tmp_path)
    del d.env["TETHER_TOKEN"]
    assert d.cli("token", "store", "file").returncode == 0
    d.start()
    try:
        token = d.cli("token", "show").stdout.strip()
        c = logged_in(d)
        r = c.post("/api/token/rotate", headers=WRITE)
        assert r.status_code == 200 and r.json() == {"rotated": True} and token not in r.text
        new = d.cli("token", "show").stdout.strip()
        assert new and new != token
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
        accept = {"Accept": "application/json, text/event-stream"}
        old = httpx.post(d.url, json=init, headers={"Authorization": f"Bearer {token}", **accept})
        assert old.status_code == 401, "the old token stops working at once"
        ok = httpx.post(d.url, json=init, headers={"Authorization": f"Bearer {new}", **accept})
        assert ok.status_code == 200
        assert c.get("/api/status").status_code == 200, "the browser's cookie still works"
    finally:
        d.stop()


def test_rotation_is_refused_clearly_when_the_environment_pins_the_token(daemon):
    c = logged_in(daemon)
    r = c.post("/api/token/rotate", headers=WRITE)
    assert r.status_code == 400 and "TETHER_TOKEN" in r.json()["message"]
