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


def person():
    return os.environ.get("TETHER_USER") or os.environ.get("USER") or os.environ.get("USERNAME") or "me"


def test_rotation_is_refused_clearly_when_the_environment_pins_the_token(daemon):
    c = logged_in(daemon)
    r = c.post("/api/token/rotate", headers=WRITE)
    assert r.status_code == 400 and "TETHER_TOKEN" in r.json()["message"]
