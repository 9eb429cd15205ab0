-- 0024 (issue 38): the outbox's per-sender indexes hold only the mails
-- that have a sender. The per-sender and per-domain reply caps
-- (`store::mail::replies_since`, `replies_to_domain_since`,
-- `replies_of_kind_since`) look a row up by `sender_key = ?` or
-- `sender_domain = ?`, which a row without a sender never matches; a
-- contest's mails (tens of thousands a contest, none with a sender) no
-- longer add an entry to either index, each a B-tree insert per mail.
-- The queries and their results are unchanged: SQLite uses a partial index
-- `WHERE x IS NOT NULL` for any `x = ?` term.
DROP INDEX outbox_sender;
CREATE INDEX outbox_sender ON outbox(sender_key, created_at) WHERE sender_key IS NOT NULL;
DROP INDEX outbox_sender_domain;
CREATE INDEX outbox_sender_domain ON outbox(sender_domain, created_at) WHERE sender_domain IS NOT NULL;
