-- 0036 (issue 38): when the server last answered a mail of this team that
-- a program sent (`Auto-Submitted: auto-generated`, proven by the team's
-- string; `mail::process::reply`). RFC 3834 asks that automatic mail get
-- no automatic answer, so that two programs never answer each other for
-- ever: such a mail is processed (it carries the team's proof), and
-- answered at most once in 24 hours, to the team's registered mailbox
-- only. One column of the team's row: nothing grows with the mails.
ALTER TABLE registrations ADD COLUMN automatic_answered_at TEXT;
