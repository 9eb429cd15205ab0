-- 0034: a confirmation code proves one mail (security.md, "Mail from
-- strangers"; red team E12). The answer to a confirmation request taken
-- in whole is marked with its request's code (its SHA-256, as the request
-- keeps it), set at intake in the transaction that stores it: a second
-- mail with the same code is no longer proven (it is the stranger's or the
-- claim's it is). The request is spent only when its answer is processed,
-- and the intake takes in every waiting mail before that: without the
-- mark, every copy of the answer was stored whole, never counted. The
-- intake reads this index, which holds only marked rows.
ALTER TABLE inbox ADD COLUMN proven_code TEXT;
CREATE INDEX inbox_proven_codes ON inbox(proven_code, received_at)
    WHERE proven_code IS NOT NULL;
