"""Signals over MCP with the official Python SDK against `tether serve`: agents ask and answer each
other and the person, the doorbell (`notifications/resources/updated` for `tether://inbox` on the
GET stream) rings once per drain cycle, system signals never ring, a role reaches every live agent
with it, a stdio session hears through the piggyback notice, a session whose stream dropped is
`degraded` and its signal `uncaptured`, and Cursor's stop hook asks a chat to drain once per cycle.
"""

import asyncio
import json
import time

import httpx
from mcp import Client, StdioServerParameters

from test_mcp_e2e import ACCEPT, BIN, TOKEN, client, text_of

CHAT = "c5555555-0000-4000-8000-00000000000a"


def bells():
    """A message handler that queues each resource-updated URI, and the queue."""
    q = asyncio.Queue()

    async def handler(msg):
        root = getattr(msg, "root", msg)
        if getattr(root, "method", None) == "notifications/resources/updated":
            await q.put((root.params.uri, time.monotonic()))

    return handler, q


async def no_bell(q, wait=0.6):
    await asyncio.sleep(wait)
    assert q.empty(), f"unexpected bell: {q.get_nowait()}"


def deliveries(daemon, sid):
    d = json.loads(daemon.cli("signal", "show", sid, "--json").stdout)
    return {x["recipient"]: x for x in d["deliveries"]}, d


def wakes(daemon, sid):
    return [(w["recipient"], w["path"], w["result"]) for w in deliveries(daemon, sid)[1]["wakes"]]


async def wait_for(pred, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = await asyncio.to_thread(pred)
        if v:
            return v
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_a_role_reaches_every_live_agent_and_the_person_answers(daemon):
    async def go():
        hr1, q1 = bells()
        hr2, q2 = bells()
        c = [client(daemon.url, message_handler=h) for h in (None, hr1, hr2)]
        async with c[0][0], c[0][1], c[1][0], c[1][1], c[2][0], c[2][1]:
            dev, r1, r2 = c[0][1], c[1][1], c[2][1]
            text_of(await dev.call_tool("session_start", {"role": "dev", "name": "dee"}))
            text_of(await r1.call_tool("session_start", {"role": "reviewer", "name": "rev-one"}))
            text_of(await r2.call_tool("session_start", {"role": "reviewer", "name": "rev-two"}))
            await asyncio.sleep(0.3)
            s = text_of(await dev.call_tool("signal_send", {"to": "reviewer", "type": "review_requested",
                                                           "body": "Please review the parser."}))
            assert s["to"] == "role:reviewer"
            assert sorted(d["recipient"] for d in s["deliveries"]) == ["rev-one", "rev-two"]
            assert (await asyncio.wait_for(q1.get(), 10))[0] == "tether://inbox"
            assert (await asyncio.wait_for(q2.get(), 10))[0] == "tether://inbox"

            # Bad input: coded errors, nothing written.
            for args, code in [({"to": "nobody", "body": "hi"}, "not_found"),
                               ({"to": "dee", "type": "gossip", "body": "hi"}, "invalid_input"),
                               ({"to": "dee", "body": "x" * (16 * 1024 + 1)}, "invalid_input"),
                               ({"reply_to": "S-999", "body": "hi"}, "not_found")]:
                r = await dev.call_tool("signal_send", args)
                assert r.is_error and json.loads(r.content[0].text)["code"] == code, (args, r)

            # An agent asks the person; the person answers from the CLI; the agent is rung.
            hd, qd = bells()
            http_d, d2 = client(daemon.url, message_handler=hd)
            async with http_d, d2:
                text_of(await d2.call_tool("session_start", {"name": "asker"}))
                await asyncio.sleep(0.3)
                ask = text_of(await d2.call_tool("signal_send", {"to": "human", "body": "Which DB should I use?"}))
                status = httpx.get(daemon.url.replace("/mcp", "/api/status"),
                                   headers={"Authorization": f"Bearer {TOKEN}"}).json()
                assert any(a["kind"] == "question_for_human" and "asker" in a["message"] for a in status["attention"])
                r = await asyncio.to_thread(daemon.cli, "signal", "reply", ask["id"], "SQLite.")
                assert r.returncode == 0, r.stderr
                assert (await asyncio.wait_for(qd.get(), 10))[0] == "tether://inbox"
                got = text_of(await d2.call_tool("signals_pending", {}))
                assert got["signals"][-1]["body"] == "SQLite." and got["signals"][-1]["from"] == "human"
                by, _ = deliveries(daemon, ask["id"])
                assert by["human"]["obligation"] == "closed"

    asyncio.run(go())
    # Bad input over the CLI gets the same codes.
    r = daemon.cli("signal", "send", "--to", "nobody", "hello")
    assert r.returncode == 1 and r.stderr.startswith("error[not_found]"), r.stderr


def test_stdio_gets_the_piggyback_notice_and_a_dropped_stream_is_degraded(daemon):
    async def go():
        params = StdioServerParameters(command=str(BIN / "tether"), args=["mcp", "stdio"], env=daemon.env)
        http_a, a = client(daemon.url)
        async with Client(params, mode="legacy") as s, http_a, a:
            started = text_of(await s.call_tool("session_start", {"name": "stdio-sam"}))
            assert started["agent"]["surface"] == "degraded"
            text_of(await a.call_tool("session_start", {"name": "http-hal"}))
            sig = text_of(await a.call_tool("signal_send", {"to": "stdio-sam", "body": "ping over stdio"}))
            assert await wait_for(lambda: wakes(daemon, sig["id"])) == [("stdio-sam", "sse", "uncaptured")]
            r = await s.call_tool("task_list", {})
            assert not r.is_error and len(r.content) == 2, r
            notice = json.loads(r.content[1].text)
            assert notice["pending_signals"] == 1 and "signals_pending" in notice["notice"]
            assert "ping" not in r.content[1].text, "the notice carries no body"
            assert wakes(daemon, sig["id"])[-1] == ("stdio-sam", "piggyback", "rang")
            got = text_of(await s.call_tool("signals_pending", {}))
            assert [(g["type"], g["body"]) for g in got["signals"]] == [
                ("peer_joined", "http-hal joined"), ("question", "ping over stdio")]
            r = await s.call_tool("task_list", {})
            assert len(r.content) == 1, "nothing pending: no notice"

    asyncio.run(go())

    # Raw HTTP: a session with a GET stream is `full`; once the stream drops it is `degraded`
    # and a signal to it is recorded `uncaptured`.
    base = daemon.url
    auth = {"Authorization": f"Bearer {TOKEN}", **ACCEPT}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    r = httpx.post(base, json=init, headers=auth)
    sid = r.headers["mcp-session-id"]
    h = {**auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
    httpx.post(base, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "session_start", "arguments": {"name": "raw-ray"}}}
    assert httpx.post(base, json=call, headers=h).status_code == 200

    def surface():
        agents = json.loads(daemon.cli("agents", "list", "--json").stdout)
        return next(a for a in agents if a["name"] == "raw-ray")["surface"]

    with httpx.Client(timeout=None) as hc:
        with hc.stream("GET", base, headers={**h, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            asyncio.run(wait_for(lambda: surface() == "full"))
    asyncio.run(wait_for(lambda: surface() == "degraded"))
    r = daemon.cli("signal", "send", "--to", "raw-ray", "--type", "status_update", "are you there?", "--json")
    sig = json.loads(r.stdout)
    assert asyncio.run(wait_for(lambda: wakes(daemon, sig["id"]))) == [("raw-ray", "sse", "uncaptured")]


def test_stop_hook_asks_a_chat_to_drain_once_per_cycle(daemon):
    def hook(event, **extra):
        payload = {"conversation_id": CHAT, "hook_event_name": event, "workspace_roots": ["/home/u/p"], **extra}
        t0 = time.monotonic()
        r = daemon.cli("hook", event, stdin=json.dumps(payload))
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout), time.monotonic() - t0

    # The chat registers through a tool call the hooks attribute to it.
    hook("beforeMCPExecution", tool_name="session_start", tool_input={})

    async def go():
        http, c = client(daemon.url)
        async with http, c:
            s = text_of(await c.call_tool("session_start", {"name": "chatty"}))
            assert s["agent"]["id"] == CHAT and s["agent"]["surface"] == "full"

    asyncio.run(go())
    assert hook("stop", status="completed", loop_count=0)[0] == {}, "nothing pending: plain {}"
    daemon.cli("signal", "send", "--to", "chatty", "Please summarise T-4", "--task", "T-4")  # no such task
    r = daemon.cli("signal", "send", "--to", "chatty", "Please summarise the parser work")
    assert r.returncode == 0, r.stderr
    answer, took = hook("stop", status="completed", loop_count=0)
    msg = answer["followup_message"]
    assert "1 signal (question)" in msg and "signals_pending" in msg and "parser" not in msg
    assert took < 2.0
    assert hook("stop", status="completed", loop_count=1)[0] == {}, "once per drain cycle"
    sid = json.loads(daemon.cli("signals", "list", "--to", "chatty", "--json").stdout)[0]["id"]
    assert ("chatty", "hook", "rang") in wakes(daemon, sid)

    # No daemon: `{}` within the deadline.
    daemon.stop()
    answer, took = hook("stop", status="completed", loop_count=0)
    assert answer == {} and took < 1.0, took
