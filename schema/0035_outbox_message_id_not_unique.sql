-- 0035 (issue 38): the outbox's `message_id` without the `UNIQUE` of its
-- definition (0002). That constraint kept an index nobody reads: no query
-- looks a mail up by its Message-ID (a reply names the mail it answers by
-- the inbox's row, `inbox_id`; a contest event's mail is queued once by
-- the unique index on `event_key`). It cost every mail queued a look-up
-- and an entry in that index: about a fifth of a contest mail's insert.
-- The ids stay unique by how they are made (`outbox::outgoing::
-- new_message_id`: the milliseconds, then 96 random bits from the OS).
--
-- SQLite cannot drop a constraint, so the table is rebuilt by its
-- documented twelve steps, as 0027 did (foreign keys off while migrating,
-- `PRAGMA foreign_key_check` before the commit: `outbox_parts` refers to
-- `outbox` by name, so its rows point at the same ids in the new table),
-- every row copied with its id, and every index of the table made again
-- with its definition (0027, 0029, 0030).
CREATE TABLE outbox_0035 (
    id               INTEGER PRIMARY KEY,
    inbox_id         INTEGER REFERENCES inbox(id),
    kind             TEXT NOT NULL,
    recipients       TEXT NOT NULL,         -- JSON list
    sender_key       TEXT,                  -- lowercased address the per-sender cap counts
    subject          TEXT NOT NULL,
    message_id       TEXT NOT NULL,         -- unique by how it is made (no index)
    raw              BLOB NOT NULL,
    state            TEXT NOT NULL,         -- queued, sent, failed (store::mail::OutState)
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    sent_at          TEXT,
    event_key        TEXT,
    reported_at      TEXT,
    sender_domain    TEXT,
    budget           TEXT NOT NULL DEFAULT 'contest',
    team_id          INTEGER,
    full_size        INTEGER,
    body_removed_at  TEXT
);
INSERT INTO outbox_0035 (id, inbox_id, kind, recipients, sender_key, subject, message_id, raw,
                         state, attempts, next_attempt_at, last_error, created_at, sent_at,
                         event_key, reported_at, sender_domain, budget, team_id, full_size,
                         body_removed_at)
    SELECT id, inbox_id, kind, recipients, sender_key, subject, message_id, raw,
           state, attempts, next_attempt_at, last_error, created_at, sent_at,
           event_key, reported_at, sender_domain, budget, team_id, full_size,
           body_removed_at
    FROM outbox ORDER BY id;
DROP TABLE outbox;
ALTER TABLE outbox_0035 RENAME TO outbox;
CREATE INDEX outbox_queue ON outbox(state, next_attempt_at);
CREATE UNIQUE INDEX outbox_event_key ON outbox(event_key) WHERE event_key IS NOT NULL;
CREATE INDEX outbox_strangers ON outbox(created_at) WHERE budget = 'strangers';
CREATE INDEX outbox_team ON outbox(team_id, created_at) WHERE team_id IS NOT NULL;
CREATE INDEX outbox_sender ON outbox(sender_key, created_at) WHERE sender_key IS NOT NULL;
CREATE INDEX outbox_sender_domain ON outbox(sender_domain, created_at) WHERE sender_domain IS NOT NULL;
CREATE INDEX outbox_kind ON outbox(kind, created_at) WHERE event_key IS NULL;
CREATE INDEX outbox_sent_bodies ON outbox(sent_at)
    WHERE state = 'sent' AND body_removed_at IS NULL;
CREATE INDEX outbox_inbox ON outbox(inbox_id) WHERE inbox_id IS NOT NULL;
