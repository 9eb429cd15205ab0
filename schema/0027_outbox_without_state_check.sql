-- 0027 (issue 38): the outbox table without the `CHECK (state IN
-- ('queued', 'sent', 'failed'))` of its definition (0002). SQLite
-- evaluated it for every row inserted or updated, building a small
-- temporary table per row for the `IN` list: about a tenth of a contest
-- mail's insert. The state's three values are now the code's
-- (`store::mail::OutState`): every write binds one of them, and a value
-- read back that is none of them is an error the caller sees
-- (`StoreError::Corrupt`), as the `CHECK` refused it on the way in.
--
-- SQLite cannot drop a constraint, so the table is rebuilt by its
-- documented twelve steps (https://www.sqlite.org/lang_altertable.html):
-- foreign keys off (`Store::migrate`, outside the transaction), the new
-- table made under another name with the same columns in the same order,
-- every row copied with its id, the old table dropped, the new one
-- renamed, its indexes made again with the same definitions, and
-- `PRAGMA foreign_key_check` (`Store::migrate`, after every migration)
-- before the commit: `outbox_parts` refers to `outbox` by name, so its
-- rows point at the same ids in the new table. No view or trigger names
-- the table. All in the one transaction of the migration.
CREATE TABLE outbox_0027 (
    id               INTEGER PRIMARY KEY,
    inbox_id         INTEGER REFERENCES inbox(id),
    kind             TEXT NOT NULL,
    recipients       TEXT NOT NULL,         -- JSON list
    sender_key       TEXT,                  -- lowercased address the per-sender cap counts
    subject          TEXT NOT NULL,
    message_id       TEXT NOT NULL UNIQUE,
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
    team_id          INTEGER
);
INSERT INTO outbox_0027 (id, inbox_id, kind, recipients, sender_key, subject, message_id, raw,
                         state, attempts, next_attempt_at, last_error, created_at, sent_at,
                         event_key, reported_at, sender_domain, budget, team_id)
    SELECT id, inbox_id, kind, recipients, sender_key, subject, message_id, raw,
           state, attempts, next_attempt_at, last_error, created_at, sent_at,
           event_key, reported_at, sender_domain, budget, team_id
    FROM outbox ORDER BY id;
DROP TABLE outbox;
ALTER TABLE outbox_0027 RENAME TO outbox;
CREATE INDEX outbox_queue ON outbox(state, next_attempt_at);
CREATE UNIQUE INDEX outbox_event_key ON outbox(event_key) WHERE event_key IS NOT NULL;
CREATE INDEX outbox_strangers ON outbox(created_at) WHERE budget = 'strangers';
CREATE INDEX outbox_team ON outbox(team_id, created_at) WHERE team_id IS NOT NULL;
CREATE INDEX outbox_sender ON outbox(sender_key, created_at) WHERE sender_key IS NOT NULL;
CREATE INDEX outbox_sender_domain ON outbox(sender_domain, created_at) WHERE sender_domain IS NOT NULL;
CREATE INDEX outbox_kind ON outbox(kind, created_at) WHERE event_key IS NULL;
