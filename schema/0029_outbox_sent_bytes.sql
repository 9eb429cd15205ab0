-- 0029: a sent mail keeps its bytes `limits.keep_sent_days` (30) days
-- after it was sent, then only its row: state, kind, recipients, the
-- sender and team the reply caps count (`store::mail::replies`), the
-- de-duplication and event keys, the times and its whole size
-- (security.md, "What grows"). A mail not sent (queued, or failed and
-- waiting for `admin resend`) keeps its bytes until it is sent.
--
-- `full_size`: the mail's size in bytes as sent (its own bytes and its
-- shared parts), set when its bytes are removed; NULL while they are kept
-- (the size is theirs). `body_removed_at`: when they were removed.
-- Each pass (`store::mail::forget_sent_bodies_due`) reads the sent rows
-- whose bytes are still kept by this index, oldest sent first, up to the
-- first that is not due: only the rows due, whatever the outbox holds.
-- The sent rows of the version before are in it as they are (their
-- `sent_at` set when they were sent): due 30 days after that.
ALTER TABLE outbox ADD COLUMN full_size INTEGER;
ALTER TABLE outbox ADD COLUMN body_removed_at TEXT;
CREATE INDEX outbox_sent_bodies ON outbox(sent_at)
    WHERE state = 'sent' AND body_removed_at IS NULL;
