-- 0020 (issue 35): lanes. The From line is a claim, not an identity.
-- Every queued mail records the budget it drew from: 'strangers' (the
-- caps per sender, per domain and in all count these only), 'team' (a
-- team proven by its authentification string: its own daily budget,
-- team_id), 'registration' (the answer to a registration that is kept,
-- bounded by max_participants and the confirmation caps) or 'contest'
-- (contest mails and the organizer's own).
ALTER TABLE outbox ADD COLUMN budget TEXT NOT NULL DEFAULT 'contest';
ALTER TABLE outbox ADD COLUMN team_id INTEGER;
UPDATE outbox SET budget = 'strangers' WHERE sender_key IS NOT NULL;
CREATE INDEX outbox_strangers ON outbox(created_at) WHERE budget = 'strangers';
CREATE INDEX outbox_team ON outbox(team_id, created_at) WHERE team_id IS NOT NULL;
-- The compile queue keys change: 'c:t<team>' (a compile request of a
-- proven team; the queue takes turns by team), 'q1:' (another mail of a
-- proven team), 'q2:' (a registration or confirmation), 'q3:' (a
-- stranger's other mail): the quick pass takes q1, then q2, then q3.
-- Pending mails are classified again.
UPDATE inbox SET queue_key = NULL WHERE state = 'new';
