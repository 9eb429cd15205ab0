-- 0007: the round summaries (RSM) written by the organizer. After each
-- round the contest may pause (rules.rsm_pause_minutes) until the
-- organizer's text arrives (knobeln rsm, or a mail carrying the one-time
-- token of the pause mail) or the pause ends; then the RSM goes out (the
-- automatic summary when there is no text) and the contest goes on. The
-- pause lives here, so a contest killed during it resumes waiting until
-- the same moment.

CREATE TABLE rsm_rounds (
    tournament_id    INTEGER NOT NULL REFERENCES tournaments(id),
    round            INTEGER NOT NULL,
    pause_started_at TEXT,            -- NULL: no pause (yet)
    pause_ends_at    TEXT,            -- the automatic summary goes out then
    token_salt       BLOB,            -- the pause mail's one-time token, salted
    token_hash       BLOB,            --   and hashed (SHA-256)
    summary          TEXT,            -- the organizer's text; NULL: none
    summary_source   TEXT,            -- 'cli' or 'mail'
    summary_at       TEXT,
    sent_at          TEXT,            -- when the RSM mails were queued
    sent_kind        TEXT,            -- 'organizer' or 'automatic'
    PRIMARY KEY (tournament_id, round)
);
