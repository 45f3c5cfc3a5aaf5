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
