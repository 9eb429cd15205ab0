-- 0017: why a contest run stopped before its end, as `serve` saw it (a game
-- the engine could not referee after its tries, a fault of the store, ...;
-- issue 33). `knobeln status` shows it and the organizer's digest reports
-- it once; `serve` resumes the contest at its next cycle all the same. One
-- row per distinct cause; gone when the contest finishes.

CREATE TABLE contest_stops (
    cause     TEXT PRIMARY KEY,   -- the error, in words
    since     TEXT NOT NULL,      -- the first stop with this cause
    last      TEXT NOT NULL,      -- the latest
    times     INTEGER NOT NULL,   -- stops with this cause
    reported  INTEGER NOT NULL DEFAULT 0  -- 1: in a digest already
);
