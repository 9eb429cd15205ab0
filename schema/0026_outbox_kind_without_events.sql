-- 0026 (issue 38): the outbox's index by kind holds only the mails that
-- belong to no contest event. It serves the reply caps
-- (`store::mail::replies_of_kind_since`, `budget_replies_of_kind_since`,
-- `team_replies_of_kind_since`) and the organizer's digest
-- (`store::mail::digest::last_queued_at`), which count replies and
-- digests: mails queued without an `event_key`. A contest's own mails (LAP,
-- LGP, DGP, GRP, GRG, GRR, the final results: tens of thousands a contest,
-- each with its event key) no longer add an entry to it, one B-tree insert
-- and a page written at the group's commit fewer per mail. The queries say
-- `event_key IS NULL` (SQLite uses a partial index only for a query whose
-- terms include its WHERE); their results are the same, as no mail they
-- count has an event key.
DROP INDEX outbox_kind;
CREATE INDEX outbox_kind ON outbox(kind, created_at) WHERE event_key IS NULL;
