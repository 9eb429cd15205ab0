-- 0032: the key rows of mails past their budget within a bound of their own
-- (security.md, "Mail from strangers"; `limits.stranger_keys_per_day`). A
-- mail kept as its de-duplication key only (a stranger's past the strangers'
-- budget, a claim past its mailbox's share) is marked; the intake counts the
-- marked rows of the last 24 hours by this index, reading only them, and the
-- pass deletes them `KEY_ROW_DAYS` after they came (they were never answered:
-- a mail taken again after its key is gone is processed at most once).
ALTER TABLE inbox ADD COLUMN kept_as_key INTEGER;
CREATE INDEX inbox_keys ON inbox(received_at) WHERE kept_as_key IS NOT NULL;
-- Past that bound a mail is not stored at all: only counted, per UTC day of
-- intake (one row a day, deleted with the key rows of that day).
CREATE TABLE inbox_unkept (
    day TEXT PRIMARY KEY,
    mails INTEGER NOT NULL,
    bytes INTEGER NOT NULL
) WITHOUT ROWID;
