-- Cursor Cloud agents as runs (kind `cloud`, see board/runs.rs and the tether-cloud crate).
-- `cloud` holds what a cloud run needs that a local one does not, as JSON: the repository, ref,
-- branch and auto-PR asked for; Cursor's agent id (minted by us before launch, so a retried
-- launch is idempotent), run id and agent URL; the raw status Cursor last gave; the branch and
-- PR it pushed; and the last stream event id (to resume the stream after a restart).
ALTER TABLE runs ADD COLUMN cloud TEXT;
CREATE INDEX runs_cloud_agent ON runs(json_extract(cloud, '$.agent_id')) WHERE cloud IS NOT NULL;
