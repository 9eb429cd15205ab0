-- 0030: a processed mail's row is kept `limits.keep_inbox_days` (90) days
-- after its processing, then deleted (security.md, "Mail from
-- strangers"): the inbox holds the mails of those days, the mails waiting
-- and the mails set aside, whatever came before. A mail done or ignored
-- is due `keep_inbox_days` after `processed_at`; each pass
-- (`store::mail::forget_processed_due`) reads the due rows by this index,
-- oldest processed first, up to the first that is not due. A mail waiting
-- (`new`) or set aside (`failed`) is in no such index and stays.
CREATE INDEX inbox_processed ON inbox(processed_at) WHERE state IN ('done', 'ignored');
-- The replies that name a mail (`outbox.inbox_id`, a foreign key) lose
-- that name when the mail's row goes: found by this index, so neither
-- that update nor the foreign key's check of the delete reads the whole
-- outbox.
CREATE INDEX outbox_inbox ON outbox(inbox_id) WHERE inbox_id IS NOT NULL;
