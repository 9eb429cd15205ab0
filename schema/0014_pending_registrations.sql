-- 0014: registrations that name a mail address other than their sender's
-- wait here until that address confirms (issue 25): no mail with a
-- stranger's text goes to an address that did not ask for it. Nothing
-- else sees these rows; a confirmed one becomes an ordinary registration
-- and its row goes.

CREATE TABLE pending_registrations (
    id            INTEGER PRIMARY KEY,
    mail_address  TEXT NOT NULL COLLATE NOCASE,
    domain        TEXT NOT NULL COLLATE NOCASE,
    requested_by  TEXT NOT NULL,          -- the sender of the registration
    body          TEXT NOT NULL,          -- the registration as mailed
    code_hash     TEXT NOT NULL UNIQUE,   -- SHA-256 (hex) of the code in the request's subject
    created_at    TEXT NOT NULL
);
CREATE INDEX pending_registrations_by_domain ON pending_registrations (domain, created_at);
