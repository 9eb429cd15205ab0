-- 0004: the tournament's secret key (16 bytes), under which the players'
-- generators get their seeds (SipHash-2-4 of the game seed). It never
-- leaves the database: no mail, protocol, result or strategy sees it.
-- Tournaments created before this migration have none: their key is the
-- public one derived from their seed.
ALTER TABLE tournaments ADD COLUMN secret BLOB;
