-- 0016: each bot's working folder kept across its ultimatum matches
-- (issue 27; the 2011 FAQ: "a file stays until the bot that created it
-- deletes it"). One row per team and contest: the folder as the team's
-- bot left it at the end of `after_game` (a `bot_games.game_key`), in
-- the stored form of `crate::sandbox::folder`. Written in the same
-- transaction as that game's row, so after a crash the two agree; the
-- rows go when the contest's results are mailed.
CREATE TABLE bot_folders (
    contest_id INTEGER NOT NULL,
    team_id INTEGER NOT NULL,
    after_game TEXT NOT NULL,
    image BLOB NOT NULL,
    PRIMARY KEY (contest_id, team_id)
);
