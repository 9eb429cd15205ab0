-- 0033: a team's own share of the mails taken in whole (security.md, "Mail
-- from strangers"; `limits.team_mails_per_day`). A mail proven by a team's
-- authentification string is charged to that team (set at intake, in the
-- transaction that stores it), so that a hostile team cannot have every
-- mail it sends stored whole; only the team's string spends the share. The
-- intake counts the charged rows of the last 24 hours by this index, which
-- holds only charged rows; rows from before 0033 are charged to nothing.
ALTER TABLE inbox ADD COLUMN proven_team INTEGER;
CREATE INDEX inbox_proven_teams ON inbox(proven_team, received_at)
    WHERE proven_team IS NOT NULL;
