"""Agent runs over MCP with the official Python SDK against `tether serve`, with the test kit's
fake Cursor CLI: `agent_run` starts a run and returns its id at once, `tether://run/{id}` is
pushed as it goes and reads its status, result and events, a task-bound run moves its task, a
follow-up continues the chat, and bad requests get coded errors with nothing started.
"""

import asyncio
import json
import tempfile
import time
from pathlib import Path

import pytest

from test_mcp_e2e import BIN, Daemon, client, text_of


@pytest.fixture
def run_daemon():
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        dm = Daemon(tmp)
        ws = tmp / "workspace"
        (ws / ".cursor").mkdir(parents=True)
        (ws / ".cursor" / "cli.json").write_text('{"version":1,"permissions":{"allow":[],"deny":[]}}\n')
        home = Path(dm.env["TETHER_HOME"])
        home.mkdir(parents=True)
        (home / "settings.json").write_text(json.dumps(
            {"runs": {"roots": [str(ws)], "result_grace_secs": 1, "kill_grace_secs": 1}}))
        dm.env.update(HOME=str(tmp / "user-home"), TETHER_CURSOR_AGENT=str(BIN / "tether-fake-agent"))
        dm.workspace = ws
        dm.start()
        try:
            yield dm
        finally:
            dm.stop()


def error_of(result):
    assert result.is_error, result
    return json.loads(result.content[0].text)


CLOUD_KEY = "key_py_cloud_0123456789abcdef"


@pytest.fixture
def cloud_daemon():
    """`tether serve` whose cloud runs go to the test kit's fake of Cursor's API."""
    import subprocess
    fake = subprocess.Popen([str(BIN / "tether-fake-cursor-api"), "--key", CLOUD_KEY],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = fake.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as d:
            dm = Daemon(Path(d))
            dm.env.update(TETHER_CURSOR_API_URL=url, CURSOR_API_KEY=CLOUD_KEY)
            dm.start()
            try:
                yield dm
            finally:
                dm.stop()
    finally:
        fake.kill()
        fake.wait()


def test_agent_run_where_cloud_launches_a_cursor_cloud_agent_whose_chat_is_searchable(cloud_daemon):
    dm = cloud_daemon

    async def go():
        http, c = client(dm.url)
        async with http, c:
            tool = next(t for t in (await c.list_tools()).tools if t.name == "agent_run")
            props = tool.input_schema["properties"]
            assert {"where", "repo", "ref", "branch", "auto_pr"} <= set(props), props
            run = text_of(await c.call_tool("agent_run", {
                "where": "cloud", "repo": "github.com/acme/shop", "prompt": "[cloud:step=50] Price the okapis"}))
            assert run["kind"] == "cloud" and run["cloud"]["repo"] == "https://github.com/acme/shop", run
            uri = f"tether://run/{run['id']}"
            deadline = time.monotonic() + 20
            while True:
                md = (await c.read_resource(uri)).contents[0].text
                if "succeeded" in md.splitlines()[0] or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            assert "succeeded" in md.splitlines()[0], md
            assert "Worked on: Price the okapis" in md
            found = text_of(await c.call_tool("sessions_find", {"query": "okapis", "project": "all"}))
            assert found["hits"] and found["hits"][0]["source"] == "cloud", found
            for args in [{"where": "cloud", "prompt": "no repository and no folder"},
                         {"where": "cloud", "repo": "not a repo", "prompt": "x"},
                         {"where": "cloud", "repo": "github.com/a/b", "prompt": "x", "permissions": {"allow": ["Write(**)"]}}]:
                assert error_of(await c.call_tool("agent_run", args))["code"] == "invalid_input", args

    asyncio.run(go())
