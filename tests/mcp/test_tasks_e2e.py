"""Tasks over MCP with the official Python SDK against `tether serve`: an agent starts a session
with a role, creates, lists and claims tasks, hands off with a note and completes; two MCP
sessions racing for one task never both win; the `tether://tasks` board resource is pushed after
a change made by another process (the CLI), and a Cursor chat known through the hooks is the actor.
"""

import asyncio
import json
import time
from datetime import datetime, timezone


from test_mcp_e2e import client, text_of

C_V10 = "c3333333-0000-4000-8000-000000000001"


def error_of(result):
    assert result.is_error, result
    return json.loads(result.content[0].text)


def test_agent_workflow_handoff_and_no_double_claim(daemon):
    async def go():
        http_a, a = client(daemon.url)
        http_b, b = client(daemon.url)
        async with http_a, a, http_b, b:
            dev = text_of(await a.call_tool("session_start", {"role": "dev"}))
            assert dev["agent"]["role"] == "dev" and dev["agent"]["name"] and dev["holding"] == []
            assert "task_claim" in dev["instructions"]
            rev = text_of(await b.call_tool("session_start", {"role": "reviewer", "name": "rita"}))
            assert rev["agent"]["name"] == "rita"
            taken = error_of(await a.call_tool("session_start", {"name": "rita"}))
            assert taken["code"] == "conflict"

            base = text_of(await a.call_tool("task_create", {
                "title": "Parse config", "priority": "high", "role": "dev", "labels": ["core"],
                "acceptance": ["rejects unknown keys"]}))
            follow = text_of(await a.call_tool("task_create", {"title": "Review config parser", "role": "reviewer",
                                                                 "depends_on": [base["id"]]}))
            assert follow["blocked_by"] == [base["id"]]
            cycle = error_of(await a.call_tool("task_update", {"id": base["id"], "add_depends_on": [follow["id"]]}))
            assert cycle["code"] == "dependency_cycle"

            ready = text_of(await b.call_tool("task_list", {"ready": True}))
            assert [t["id"] for t in ready["tasks"]] == [base["id"]]

            # Both race for the same task, many times over: exactly one wins each time.
            for i in range(5):
                t = text_of(await a.call_tool("task_create", {"title": f"race {i}"}))
                ra, rb = await asyncio.gather(a.call_tool("task_claim", {"id": t["id"]}),
                                              b.call_tool("task_claim", {"id": t["id"]}))
                assert [ra.is_error, rb.is_error].count(False) == 1, (ra, rb)
                loser = ra if ra.is_error else rb
                assert error_of(loser)["code"] == "task_held"

            mine = text_of(await a.call_tool("task_claim", {"lease_minutes": 5}))
            assert mine["id"] == base["id"] and mine["assignee"] == dev["agent"]["name"]
            lease = datetime.fromisoformat(mine["lease_until"].replace("Z", "+00:00"))
            left = (lease - datetime.now(timezone.utc)).total_seconds()
            assert 240 < left <= 300, f"a 5-minute lease has {left:.0f} s left"
            held = error_of(await b.call_tool("task_update", {"id": base["id"], "title": "mine"}))
            assert held["code"] == "task_held"
            text_of(await b.call_tool("task_update", {"id": base["id"], "comment": "remember the env override"}))
            text_of(await a.call_tool("task_update", {"id": base["id"], "release": True, "handoff": True,
                                                      "comment": "parser done, errors left"}))
            again = text_of(await a.call_tool("task_claim", {"id": base["id"]}))
            done = text_of(await a.call_tool("task_update", {"id": base["id"], "summary": "parser with clear errors"}))
            assert done["status"] == "done" and again["status"] == "in_progress"

            nxt = text_of(await b.call_tool("task_claim", {}))
            assert nxt["id"] == follow["id"], "the reviewer's role picks the review"
            detail = text_of(await b.call_tool("task_list", {"id": base["id"]}))
            assert [n["kind"] for n in detail["notes"]] == ["comment", "handoff"]
            assert detail["notes"][1]["detail"]["text"] == "parser done, errors left"
            kinds = [e["kind"] for e in detail["history"]]
            assert kinds.count("claimed") == 2 and kinds[-1] == "completed"
            me = text_of(await b.call_tool("task_list", {"assignee": "me"}))
            assert follow["id"] in [t["id"] for t in me["tasks"]]
            assert {t["assignee"] for t in me["tasks"]} == {"rita"}

            resumed = text_of(await b.call_tool("session_start", {}))
            assert [t["id"] for t in resumed["holding"]] == [t["id"] for t in me["tasks"]]
            bad = error_of(await a.call_tool("task_update", {"id": "T-999", "status": "done"}))
            assert bad["code"] == "not_found"
            wrong = error_of(await a.call_tool("task_update", {"id": follow["id"], "status": "sideways"}))
            assert wrong["code"] == "invalid_input"

    asyncio.run(go())

    # A person sees the same board from the CLI.
    r = daemon.cli("task", "list", "--status", "done", "--json")
    assert r.returncode == 0, r.stderr
    assert any(t["title"] == "Parse config" for t in json.loads(r.stdout)["tasks"])
    r = daemon.cli("agents", "list", "--json")
    assert "rita" in {a["name"] for a in json.loads(r.stdout)}


def test_board_resource_is_pushed_after_a_cli_change(daemon):
    async def go():
        got = asyncio.Queue()

        async def handler(msg):
            root = getattr(msg, "root", msg)
            if getattr(root, "method", None) == "notifications/resources/updated":
                await got.put(root.params.uri)

        http, c = client(daemon.url, message_handler=handler)
        async with http, c:
            res = await c.list_resources()
            assert any(r.uri == "tether://tasks" for r in res.resources)
            await c.subscribe_resource("tether://tasks")
            await asyncio.sleep(0.3)  # the GET stream is open
            t0 = time.monotonic()
            r = await asyncio.to_thread(daemon.cli, "task", "add", "Written at the CLI", "--as", "pat")
            assert r.returncode == 0, r.stderr
            assert await asyncio.wait_for(got.get(), 10) == "tether://tasks"
            print(f"CLI change → board notification: {(time.monotonic() - t0) * 1000:.0f} ms")
            board = await c.read_resource("tether://tasks")
            assert "Written at the CLI" in board.contents[0].text

    asyncio.run(go())


def test_a_cursor_chat_known_through_hooks_is_the_actor(daemon):
    payload = {"conversation_id": C_V10, "hook_event_name": "beforeMCPExecution", "workspace_roots": ["/home/u/cproj"],
               "tool_name": "session_start", "tool_input": {"role": "dev"}}
    r = daemon.cli("hook", "beforeMCPExecution", stdin=json.dumps(payload))
    assert r.returncode == 0, r

    async def go():
        http, c = client(daemon.url)
        async with http, c:
            s = text_of(await c.call_tool("session_start", {"role": "dev"}))
            assert s["agent"]["id"] == C_V10 and s["agent"]["kind"] == "cursor"
            assert s["agent"]["project"] == "/home/u/cproj"
            t = text_of(await c.call_tool("task_create", {"title": "From a chat"}))
            claimed = text_of(await c.call_tool("task_claim", {"id": t["id"]}))
            assert claimed["assignee"] == s["agent"]["name"]

    asyncio.run(go())
    agents = json.loads(daemon.cli("agents", "list", "--json").stdout)
    chat = next(a for a in agents if a["id"] == C_V10)
    assert chat["status"] == "working" and chat["tasks"] == ["T-1"]
    # The chat stops: the hooks say so, and the board shows it idle while holding a task.
    daemon.cli("hook", "stop", stdin=json.dumps({"conversation_id": C_V10, "hook_event_name": "stop"}))
    agents = json.loads(daemon.cli("agents", "list", "--json").stdout)
    assert next(a for a in agents if a["id"] == C_V10)["status"] == "idle"
