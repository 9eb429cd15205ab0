-- 0006: the organizer's levers. Every admin action is logged; the contest
-- has one holder at a time (a lease renewed by a heartbeat, taken over once
-- it expires, or at once when its process is seen gone on the same machine);
-- a withdrawn team's registration is kept, moved out of the registrations
-- table.

CREATE TABLE admin_log (
    id       INTEGER PRIMARY KEY,
    at       TEXT NOT NULL,
    actor    TEXT NOT NULL,           -- the OS user who ran the command
    action   TEXT NOT NULL,           -- e.g. withdraw, set-address, reset-auth, resend, reprocess
    target   TEXT NOT NULL,           -- a team name, an outbox or inbox id
    details  TEXT NOT NULL            -- JSON: what changed, never a secret
);

CREATE TABLE contest_lease (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    holder       TEXT NOT NULL,       -- a random token of the holding process
    description  TEXT NOT NULL,       -- who holds it, for people: command, pid, host
    process      TEXT NOT NULL,       -- boot id, pid and start time: is it still running?
    acquired_at  TEXT NOT NULL,
    renewed_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);

CREATE TABLE withdrawals (
    team_id       INTEGER PRIMARY KEY REFERENCES teams(id),
    mail_address  TEXT NOT NULL,
    registration  TEXT NOT NULL,      -- the registrations row as it was, JSON (blobs in hex)
    reason        TEXT NOT NULL,
    withdrawn_at  TEXT NOT NULL
);
