-- 0002: the mail front end: registrations, the inbox (every raw mail, stored
-- before anything else happens), the outbox (every reply, queued in the same
-- transaction as the state change that caused it), compile requests (for the
-- rate limit) and the IMAP position.

CREATE TABLE registrations (
    team_id         INTEGER PRIMARY KEY REFERENCES teams(id),
    mail_address    TEXT NOT NULL UNIQUE COLLATE NOCASE,
    requested_name  TEXT NOT NULL,
    preferences     TEXT NOT NULL,          -- comma-separated codes, e.g. LAP,DGP
    organization    TEXT NOT NULL,
    members         TEXT NOT NULL,          -- JSON
    record          TEXT NOT NULL,          -- the full registration format (for LAP)
    auth_salt       BLOB NOT NULL,
    auth_hash       BLOB NOT NULL,          -- SHA-256(salt || auth string)
    registered_at   TEXT NOT NULL,
    inbox_id        INTEGER
);

CREATE TABLE inbox (
    id            INTEGER PRIMARY KEY,
    origin        TEXT NOT NULL,            -- spool:<file>, ingest:<file>, imap:<mailbox>
    uidvalidity   INTEGER,
    uid           INTEGER,
    message_id    TEXT,
    dedupe_key    TEXT NOT NULL UNIQUE,     -- Message-ID, else SHA-256 of the raw bytes
    raw           BLOB NOT NULL,
    received_at   TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('new', 'done', 'ignored', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT,
    outcome       TEXT,
    processed_at  TEXT,
    UNIQUE (origin, uidvalidity, uid)
);
CREATE INDEX inbox_state ON inbox(state, id);

CREATE TABLE outbox (
    id               INTEGER PRIMARY KEY,
    inbox_id         INTEGER REFERENCES inbox(id),
    kind             TEXT NOT NULL,
    recipients       TEXT NOT NULL,         -- JSON list
    sender_key       TEXT,                  -- lowercased address the per-sender cap counts
    subject          TEXT NOT NULL,
    message_id       TEXT NOT NULL UNIQUE,
    raw              BLOB NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('queued', 'sent', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    sent_at          TEXT
);
CREATE INDEX outbox_queue ON outbox(state, next_attempt_at);
CREATE INDEX outbox_sender ON outbox(sender_key, created_at);

CREATE TABLE compile_requests (
    id          INTEGER PRIMARY KEY,
    team_id     INTEGER NOT NULL REFERENCES teams(id),
    at          TEXT NOT NULL,
    version_id  INTEGER REFERENCES strategy_versions(id)
);
CREATE INDEX compile_requests_team ON compile_requests(team_id, at);

CREATE TABLE imap_state (
    mailbox      TEXT PRIMARY KEY,
    uidvalidity  INTEGER NOT NULL,
    last_uid     INTEGER NOT NULL
);
