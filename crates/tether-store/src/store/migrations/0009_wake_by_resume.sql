-- Waking an idle Cursor CLI chat by a follow-up run (`--resume`), opt-in per agent. A run and its
-- follow-ups are one agent, `run:R-<root>`; `run_signals` records which signals a waking run
-- carried in its prompt (its result answers the ones still unanswered when it succeeds), and
-- bounds the wakes per hour.
ALTER TABLE agents ADD COLUMN wake_by_resume INTEGER NOT NULL DEFAULT 0;

ALTER TABLE runs ADD COLUMN root INTEGER REFERENCES runs(num);
WITH RECURSIVE chain(num, root) AS (
    SELECT num, num FROM runs WHERE parent IS NULL
    UNION ALL
    SELECT r.num, c.root FROM runs r JOIN chain c ON r.parent = c.num
)
UPDATE runs SET root = (SELECT chain.root FROM chain WHERE chain.num = runs.num);
CREATE INDEX runs_root ON runs(root, num);

CREATE TABLE run_signals (
    run    INTEGER NOT NULL REFERENCES runs(num) ON DELETE CASCADE,
    signal INTEGER NOT NULL REFERENCES signals(num) ON DELETE CASCADE,
    PRIMARY KEY (run, signal)
) STRICT, WITHOUT ROWID;
CREATE INDEX run_signals_signal ON run_signals(signal);
