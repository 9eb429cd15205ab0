-- 0034: a one-time secret proves one mail at a time (security.md, "Mail
-- from strangers"; red team E12). A mail proven at intake by a
-- confirmation request's code or a round's pause token is marked with it
-- (the code's SHA-256, or `rsm:TOURNAMENT:ROUND`), in the transaction that
-- stores it: while it waits to be processed, no other mail is proven by
-- the same secret (it is the stranger's or the claim's it is). A secret is
-- spent only when its mail is processed, and the intake takes in every
-- waiting mail before that: without the mark every copy was stored whole,
-- never counted. The intake reads this index, which holds only marked rows.
ALTER TABLE inbox ADD COLUMN proven_once TEXT;
CREATE INDEX inbox_proven_once ON inbox(proven_once, state)
    WHERE proven_once IS NOT NULL;
