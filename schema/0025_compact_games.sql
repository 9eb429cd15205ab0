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

INSERT INTO games_0025
SELECT tournament_id, round, grp, slot, attempt, player_p, player_q, seed,
       points_p, points_q, throws,
       CASE WHEN failures = '[]' THEN NULL ELSE failures END,
       -- A time already an integer (a row this migration copied before)
       -- is kept as it is.
       CASE WHEN typeof(finished_at) = 'integer' THEN finished_at
       ELSE COALESCE(CAST(strftime('%s', finished_at) AS INTEGER) * 1000
         + CASE WHEN substr(finished_at, 20, 1) = '.'
                THEN CAST(substr(finished_at, 21, 3) AS INTEGER) ELSE 0 END, 0) END,
       throws_format
FROM games ORDER BY tournament_id, round, grp, slot;

DROP TABLE games;
ALTER TABLE games_0025 RENAME TO games;
