-- 0004: the tournament's secret key (16 bytes), under which the players'
-- generators get their seeds (SipHash-2-4 of the game seed). It never
-- leaves the database: no mail, protocol, result or strategy sees it.
-- Tournaments created before this migration have none: their key is the
-- public one derived from their seed.
ALTER TABLE tournaments ADD COLUMN secret BLOB;

-- The throws of a game: 0 = i32 little-endian pairs (8 bytes a throw),
-- 1 = each player's differences to its previous throw, zigzag LEB128
-- varints, pairs interleaved (about 2-3 kB for a 1000-throw game).
ALTER TABLE games ADD COLUMN throws_format INTEGER NOT NULL DEFAULT 0;

-- Team names compare case-insensitively (ASCII, as SQLite's lower()):
-- an index on the folded name makes a registration's name check a lookup,
-- and the search for a free `_2`, `_3`, … one range read.
CREATE INDEX teams_name_lower ON teams(lower(name));
