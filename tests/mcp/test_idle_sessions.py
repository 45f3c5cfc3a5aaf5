"""Two MCP sessions sit idle for longer than rmcp's default session keep-alive (300 s) with their
GET streams open, as Cursor's do between prompts, then both keep working with the same session
ids. rmcp would otherwise close them and the client would get 404 and stay dead.

Marked slow: scripts/test runs it in the background while the other tests run (it uses no CPU).
"""

import asyncio
import os
import tempfile
from pathlib import Path

import pytest

from test_mcp_e2e import B_SPLIT, Daemon, client, text_of

pytestmark = pytest.mark.slow
IDLE_S = float(os.environ.get("TETHER_IDLE_TEST_SECONDS", "310"))


def test_two_sessions_idle_past_the_sdk_keep_alive_keep_working():
    with tempfile.TemporaryDirectory() as d:
        daemon = Daemon(Path(d)).start()
        try:
            async def go():
                http_a, a = client(daemon.url)
                http_b, b = client(daemon.url)
                async with http_a, a, http_b, b:
                    for c in (a, b):
                        found = text_of(await c.call_tool("sessions_find", {"query": "narwhal", "project": "all"}))
                        assert found["hits"][0]["session_id"] == B_SPLIT
                    await asyncio.sleep(IDLE_S)
                    for c in (a, b):
                        found = text_of(await c.call_tool("sessions_find", {"query": "narwhal", "project": "all"}))
                        assert found["hits"][0]["session_id"] == B_SPLIT

            asyncio.run(go())
        finally:
            daemon.stop()
