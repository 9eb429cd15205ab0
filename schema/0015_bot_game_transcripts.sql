-- 0015: what a bot game's page needs (issue 26). `seats` are the game's
-- teams in seat order (JSON), `pairing` the page the game is listed on
-- (the two teams, lower id first, or the team and the island), `moves`
-- the game's moves form (every line the bots printed and the failures
-- outside the rules; the referee's lines follow from the rules): kept for
-- the first `[site] transcripts_per_pairing` repetitions of each pairing,
-- NULL for the others and for games stored before this migration.
ALTER TABLE bot_games ADD COLUMN seats TEXT;
ALTER TABLE bot_games ADD COLUMN pairing TEXT;
ALTER TABLE bot_games ADD COLUMN moves TEXT;
CREATE INDEX bot_games_by_pairing ON bot_games (contest_id, pairing, game_key);
