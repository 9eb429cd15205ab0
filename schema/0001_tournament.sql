-- 0001: teams, strategy versions and the tournament engine's records.
-- Seeds are 64-bit unsigned numbers stored as their two's-complement i64.

CREATE TABLE teams (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

CREATE TABLE strategy_versions (
    id                INTEGER PRIMARY KEY,
    team_id           INTEGER NOT NULL REFERENCES teams(id),
    source            BLOB NOT NULL,
    source_sha256     TEXT NOT NULL,
    accepted          INTEGER NOT NULL CHECK (accepted IN (0, 1)),
    binary            BLOB,
    lexical_elements  INTEGER,
    description       TEXT,
    report            TEXT NOT NULL,      -- the compile report, JSON
    compiled_at       TEXT NOT NULL,
    CHECK (accepted = 0 OR binary IS NOT NULL)
);
CREATE INDEX strategy_versions_team ON strategy_versions(team_id, id);
CREATE INDEX strategy_versions_sha ON strategy_versions(source_sha256);

CREATE TABLE tournaments (
    id           INTEGER PRIMARY KEY,
    seed         INTEGER NOT NULL,
    config       TEXT NOT NULL,           -- referee config and evolution config, JSON
    entries_key  TEXT NOT NULL,           -- hash of the entries, to find a tournament to resume
    state        TEXT NOT NULL CHECK (state IN ('running', 'finished')),
    started_at   TEXT NOT NULL,
    finished_at  TEXT
);

CREATE TABLE tournament_entries (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    team_id        INTEGER NOT NULL REFERENCES teams(id),
    version_id     INTEGER NOT NULL REFERENCES strategy_versions(id),
    PRIMARY KEY (tournament_id, team_id)
);

CREATE TABLE rounds (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    number         INTEGER NOT NULL,
    field          TEXT NOT NULL,         -- team ids, JSON
    is_final       INTEGER NOT NULL,
    finished_at    TEXT,
    PRIMARY KEY (tournament_id, number)
);

CREATE TABLE groups (
    tournament_id  INTEGER NOT NULL,
    round          INTEGER NOT NULL,
    number         INTEGER NOT NULL,
    members        TEXT NOT NULL,         -- team ids, JSON
    finished_at    TEXT,
    PRIMARY KEY (tournament_id, round, number),
    FOREIGN KEY (tournament_id, round) REFERENCES rounds(tournament_id, number)
);

CREATE TABLE games (
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
    throws         BLOB NOT NULL,         -- i32 little-endian pairs
    failures       TEXT NOT NULL,         -- JSON list of referee failures
    finished_at    TEXT NOT NULL,
    PRIMARY KEY (tournament_id, round, grp, slot),
    FOREIGN KEY (tournament_id, round, grp) REFERENCES groups(tournament_id, round, number)
);

CREATE TABLE disqualifications (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    team_id        INTEGER NOT NULL REFERENCES teams(id),
    round          INTEGER NOT NULL,
    grp            INTEGER NOT NULL,
    slot           INTEGER NOT NULL,      -- the game of the second failure
    reason         TEXT NOT NULL,
    PRIMARY KEY (tournament_id, team_id)
);

CREATE TABLE evolution_generations (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    generation     INTEGER NOT NULL,
    counts         TEXT NOT NULL,         -- {team id: count}, JSON
    PRIMARY KEY (tournament_id, generation)
);
