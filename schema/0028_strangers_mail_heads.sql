-- 0028: a stranger's processed mail keeps its head (the first 4 KiB) for
-- 7 days, then only what de-duplication needs (its key), its state,
-- outcome, times and real size (security.md, "What grows"). The mail's
-- processing sets `forget_head_at` (NULL: the head is kept); each pass
-- empties the heads that are due, found by this index alone.
ALTER TABLE inbox ADD COLUMN forget_head_at TEXT;
CREATE INDEX inbox_heads_due ON inbox(forget_head_at) WHERE forget_head_at IS NOT NULL;
-- The mails processed before: a stranger's is one done or ignored whose
-- replies all drew on the strangers' budgets (or that had none), that was
-- not passed on to the organizer and that no registration keeps. Their
-- heads are due 7 days after their processing.
UPDATE inbox
   SET forget_head_at = strftime('%Y-%m-%dT%H:%M:%fZ', processed_at, '+7 days')
 WHERE state IN ('done', 'ignored') AND length(raw) > 0 AND processed_at IS NOT NULL
   AND id NOT IN (SELECT inbox_id FROM outbox WHERE inbox_id IS NOT NULL
                     AND (budget NOT IN ('strangers', 'confirmed') OR kind = 'forward'))
   AND id NOT IN (SELECT inbox_id FROM registrations WHERE inbox_id IS NOT NULL);
