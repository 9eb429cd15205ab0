-- 0021: whether a registration's address is proven. The From line of a
-- registration is a claim: a stranger can register any address "from
-- itself". Such a registration waits (proven_at NULL) until the team's
-- first mail with its authentification string; one registered through a
-- confirmed address is proven at once. In a full contest a registration
-- that waited longer than three days gives its place to a newcomer whose
-- address answered a confirmation request (mail::commands::register).
-- Registrations stored before this version count as proven: they keep the
-- places they held.
ALTER TABLE registrations ADD COLUMN proven_at TEXT;
UPDATE registrations SET proven_at = registered_at;
-- The mailbox a confirmation request went to (mail::sender::sender_key:
-- lower case, without a +tag), so that one request a day per address
-- counts a mailbox, not each spelling of it. Older rows have none and are
-- compared by their address.
ALTER TABLE pending_registrations ADD COLUMN mailbox TEXT;
