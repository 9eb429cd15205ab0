-- 0021: a registration holds a place once its address is proven. The From
-- line of a registration is a claim: a stranger can register any address
-- "from itself". Such a registration waits (proven_at NULL) until the
-- team's first mail with its authentification string, or it was
-- registered through a confirmed address; `max_participants` and
-- `max_teams_per_organization` count proven registrations, and at most as
-- many again may wait (beyond that a registration confirms its address).
-- Registrations stored before this version keep the places they held.
ALTER TABLE registrations ADD COLUMN proven_at TEXT;
UPDATE registrations SET proven_at = registered_at;
