-- 0012: the built programs of bots kept their authors' authentification
-- strings. An interpreted bot's program is its source, and before this
-- version a bot's source was built (and its program stored) with its
-- `<<FROM>>` line whole. From this version on the string is masked before
-- the build; this asks the server to seal the backlog once more at its
-- first processing pass (see 0008), now including bot programs.

INSERT OR IGNORE INTO maintenance_tasks (name) VALUES ('seal_backlog');
