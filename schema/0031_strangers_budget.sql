-- 0031: the strangers' mails of a day within a budget of the server's own
-- (security.md, "Mail from strangers"; `limits.stranger_mails_per_day` and
-- its shares per domain and per sender). A stranger's mail taken in whole
-- is charged to its folded sender and domain (set at intake, in the
-- transaction that stores it); the intake counts the charged rows of the
-- last 24 hours by these indexes, reading only charged rows. A
-- participant's mail and a mail kept as its key only carry neither and
-- are in no index; rows from before 0031 are charged to nothing.
ALTER TABLE inbox ADD COLUMN stranger_sender TEXT;
ALTER TABLE inbox ADD COLUMN stranger_domain TEXT;
CREATE INDEX inbox_strangers ON inbox(received_at) WHERE stranger_sender IS NOT NULL;
CREATE INDEX inbox_stranger_senders ON inbox(stranger_sender, received_at)
    WHERE stranger_sender IS NOT NULL;
CREATE INDEX inbox_stranger_domains ON inbox(stranger_domain, received_at)
    WHERE stranger_sender IS NOT NULL;
-- A mail that only claims a registered team's mailbox (its From or
-- Reply-To line names it; no authentification string, no confirmation
-- code) is charged to that mailbox (`limits.claimed_mails_per_mailbox_per_day`),
-- never to the strangers' budget, so that neither can use up the other.
ALTER TABLE inbox ADD COLUMN claimed_mailbox TEXT;
CREATE INDEX inbox_claimed_mailboxes ON inbox(claimed_mailbox, received_at)
    WHERE claimed_mailbox IS NOT NULL;
