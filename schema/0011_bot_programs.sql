-- 0011: bots of the bot disciplines (issue 14). A bot version is a row of
-- strategy_versions (its source, the verdict, the compile report) whose
-- `binary` is the built program as JSON; this table says its discipline
-- and language. The contest run of a bot discipline stores each game it
-- played in bot_games, so that a run killed midway resumes where it was;
-- bot_islands holds the islands participants sent in.

CREATE TABLE bot_programs (
    version_id  INTEGER PRIMARY KEY REFERENCES strategy_versions(id),
    discipline  TEXT NOT NULL,
    language    TEXT NOT NULL
);

CREATE TABLE bot_contests (
    id           INTEGER PRIMARY KEY,
    discipline   TEXT NOT NULL,
    seed         INTEGER NOT NULL,
    config       TEXT NOT NULL,          -- the discipline's section, JSON
    entries      TEXT NOT NULL,          -- [[team id, version id, team name]], JSON
    islands      TEXT NOT NULL,          -- [[name, text]], JSON (flooding only)
    state        TEXT NOT NULL CHECK (state IN ('running', 'finished')),
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    results      TEXT                    -- the final table, JSON
);

CREATE TABLE bot_games (
    contest_id  INTEGER NOT NULL REFERENCES bot_contests(id),
    game_key    TEXT NOT NULL,           -- the planner's key, JSON
    result      TEXT NOT NULL,           -- what the planner needs, JSON
    record      TEXT NOT NULL,           -- outcome, failures, CPU, JSON
    played_at   TEXT NOT NULL,
    PRIMARY KEY (contest_id, game_key)
);

-- Islands sent in by participants of a flooding island contest (the
-- latest accepted one per team), in the seed's text format.
CREATE TABLE bot_islands (
    team_id       INTEGER PRIMARY KEY REFERENCES teams(id),
    island        TEXT NOT NULL,
    submitted_at  TEXT NOT NULL
);
