-- 0009: nothing lost in silence. A mail too large to keep is stored as its
-- header part with its real size (full_size); failed outgoing mails and
-- set-aside incoming mails are reported to the organizer in one digest and
-- marked when they were (reported_at); the reply caps count per sender and
-- per sender domain (sender_domain).

ALTER TABLE inbox ADD COLUMN full_size INTEGER;      -- NULL: raw is the whole mail
ALTER TABLE inbox ADD COLUMN reported_at TEXT;      -- in the organizer's digest since
ALTER TABLE outbox ADD COLUMN reported_at TEXT;     -- in the organizer's digest since
ALTER TABLE outbox ADD COLUMN sender_domain TEXT;   -- the domain of sender_key
CREATE INDEX outbox_sender_domain ON outbox(sender_domain, created_at);
CREATE INDEX outbox_kind ON outbox(kind, created_at);
