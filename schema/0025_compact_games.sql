-- 0025: a game's row in fewer bytes (issue 38). The games of a 2000-team
-- contest took 97 bytes each: 80 in the table, 17 more in the index of its
-- primary key, which held the key a second time beside the rowid.
--
-- - `games` is a WITHOUT ROWID table: its rows are stored in the order of
--   the primary key (tournament, round, group, slot) and found by it, with
--   no rowid and no separate index.
-- - `finished_at` is the time in milliseconds since 1970-01-01 UTC (an
--   integer of 6 bytes), no longer the 24-byte RFC 3339 text; readers
--   format it as before.
-- - `failures` is NULL for a game without failures (almost every game),
--   no longer the text '[]'.
--
-- This file was corrected after it shipped (branch security-leftovers):
-- its first version read exactly three digits after the decimal point
-- ('.5Z' became 5 ms) and a time it could not read as 0 (1970). Every
-- time this server wrote has exactly three digits (`store::timestamp`),
-- which both versions read alike, so a database the first version
-- migrated holds what this one would have made of it.
--
-- The rows are copied once; nothing else changes (the throws, their
-- format and digest, the seed, the players and the attempt stay as they
-- were). Copying 425,738 games takes a few seconds (docs/src/figures.md).
CREATE TABLE games_0025 (
    tournament_id  INTEGER NOT NULL,
    round          INTEGER NOT NULL,
    grp            INTEGER NOT NULL,
    slot           INTEGER NOT NULL,
    attempt        INTEGER NOT NULL,
    player_p       INTEGER NOT NULL REFERENCES teams(id),
    player_q       INTEGER NOT NULL REFERENCES teams(id),
    seed           INTEGER NOT NULL,
    points_p       INTEGER NOT NULL,
    points_q       INTEGER NOT NULL,
    throws         BLOB NOT NULL,         -- by throws_format (store/throws.rs)
    failures       TEXT,                  -- JSON list of referee failures; NULL: none
    finished_at    INTEGER NOT NULL,      -- milliseconds since 1970-01-01 UTC
    throws_format  INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, round, grp, slot),
    FOREIGN KEY (tournament_id, round, grp) REFERENCES groups(tournament_id, round, number)
) WITHOUT ROWID;

-- A time the copy cannot read refuses the migration (the database stays
-- as it was, at the schema before), never a time of 1970.
CREATE TRIGGER games_0025_time BEFORE INSERT ON games_0025
WHEN NEW.finished_at IS NULL
BEGIN
    SELECT RAISE(ABORT, 'schema 0025: a game''s finished_at is not an RFC 3339 time (like 2026-01-01T10:00:00.5Z); nothing was changed: correct that row of the table games and start again');
END;

INSERT INTO games_0025
SELECT tournament_id, round, grp, slot, attempt, player_p, player_q, seed,
       points_p, points_q, throws,
       CASE WHEN failures = '[]' THEN NULL ELSE failures END,
       -- A time already an integer (a row this migration copied before)
       -- is kept as it is. A text is read as RFC 3339 with a fraction of
       -- any number of digits (none, '.5', '.123456789'), cut to the
       -- millisecond (SQLite's reading, as `store::timestamp` cuts), and any offset ('Z', '+02:00'); what does not read
       -- as such a time is NULL, which the trigger refuses.
       CASE WHEN typeof(finished_at) = 'integer' THEN finished_at
       WHEN finished_at GLOB
         '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
       THEN CAST(strftime('%s', finished_at) AS INTEGER) * 1000
         + CAST(substr(strftime('%f', finished_at), 4, 3) AS INTEGER)
       END,
       throws_format
FROM games ORDER BY tournament_id, round, grp, slot;

DROP TRIGGER games_0025_time;
DROP TABLE games;
ALTER TABLE games_0025 RENAME TO games;
