-- 0018 (issue 35): the cost of a mail does not grow with the field.
-- A secret's index digest (SHA-256 of a label and the secret, see
-- mail::auth::index) beside its salted hash: a word of a mail is looked up
-- by one indexed read, not checked against every team's salted hash.
-- Secrets stored before this version have none and are checked the old
-- way (a reset of the auth string gives one).
ALTER TABLE registrations ADD COLUMN auth_index BLOB;
CREATE UNIQUE INDEX registrations_auth_index ON registrations(auth_index)
    WHERE auth_index IS NOT NULL;
ALTER TABLE rsm_rounds ADD COLUMN token_index BLOB;
CREATE INDEX rsm_rounds_token_index ON rsm_rounds(token_index)
    WHERE token_index IS NOT NULL;

-- The mailbox of a registration: its address in lower case without a
-- `+tag` (mail::process::sender_key), so that a mailbox holds a bounded
-- number of teams however many tags it invents.
ALTER TABLE registrations ADD COLUMN mailbox TEXT;
UPDATE registrations SET mailbox =
    CASE
        WHEN instr(lower(mail_address), '@') = 0 THEN lower(mail_address)
        WHEN instr(substr(lower(mail_address), 1, instr(lower(mail_address), '@') - 1), '+') > 1
            THEN substr(lower(mail_address), 1, instr(lower(mail_address), '+') - 1)
                 || substr(lower(mail_address), instr(lower(mail_address), '@'))
        ELSE lower(mail_address)
    END;
CREATE INDEX registrations_mailbox ON registrations(mailbox);
