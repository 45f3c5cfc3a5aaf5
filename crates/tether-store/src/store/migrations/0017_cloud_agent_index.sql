-- The board's SQL now reads a cloud run's agent with `cloud ->> 'agent_id'`, which PostgreSQL
-- (the team board) also accepts; SQLite uses an expression index only for the expression it was
-- built on, so the index follows the queries.
DROP INDEX runs_cloud_agent;
CREATE INDEX runs_cloud_agent ON runs(cloud ->> 'agent_id') WHERE cloud IS NOT NULL;
