"""The benchmark's comparison server: `sessions_find` served by the official MCP Python SDK
(`MCPServer`, called FastMCP before mcp 2.0) over Streamable HTTP, running the same list query
on the same Tether index file. Started by `tether-bench`; usage: sdk_server.py INDEX_DB PORT
"""

import json
import sqlite3
import sys

from mcp.server.mcpserver import MCPServer

DB = sys.argv[1]
PORT = int(sys.argv[2])

server = MCPServer("tether-python-comparison", log_level="WARNING")
conn = sqlite3.connect(f"file:{DB}?mode=ro", uri=True, check_same_thread=False)
conn.row_factory = sqlite3.Row


@server.tool()
def sessions_find(project: str = "all", limit: int = 10, query: str | None = None) -> str:
    """Find past Cursor chats (most recent first)."""
    rows = conn.execute(
        """SELECT s.id, s.title, s.project, s.origin, s.format, s.message_count, s.created_at,
                  s.updated_at, m.nickname, coalesce(m.bookmarked, 0) AS bookmarked,
                  coalesce(m.no_index, 0) AS no_index, s.archived, s.model, s.mode,
                  (SELECT group_concat(tag, char(31)) FROM
                     (SELECT tag FROM session_tags t WHERE t.session_id = s.id ORDER BY tag)) AS tags
           FROM sessions s LEFT JOIN session_meta m ON m.session_id = s.id
           ORDER BY coalesce(s.updated_at, s.created_at, 0) DESC, s.id LIMIT ?""",
        (limit,),
    ).fetchall()
    return json.dumps([dict(r) for r in rows])


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)
