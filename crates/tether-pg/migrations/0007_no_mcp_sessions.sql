-- MCP sessions are each machine's: a session is reached only through the daemon that holds it, and
-- its state is that daemon's, so they stay in the machine's own store whatever the board's engine.
-- 0002 made a table for them here that nothing ever wrote; the Agents list read it as "no session
-- holds a stream" and called every MCP agent on a team board unreachable. The list now asks the
-- machine's own store (`ops::agents::list`), and the table goes.
DROP TABLE mcp_sessions;
