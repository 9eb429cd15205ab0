-- 0003: the contest run by the server. Event mails (LAP, LGP, DGP, ...) carry
-- a unique event key, so that a resumed contest never sends one twice.

ALTER TABLE outbox ADD COLUMN event_key TEXT;
CREATE UNIQUE INDEX outbox_event_key ON outbox(event_key) WHERE event_key IS NOT NULL;

CREATE TABLE contest (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    state          TEXT NOT NULL CHECK (state IN ('running', 'finished')),
    started_at     TEXT NOT NULL,
    finished_at    TEXT
);
