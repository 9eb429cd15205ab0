-- 0022: the outbox keeps a body that many mails carry once. LAP goes to
-- every team with the same list, GRG and GRR to every member of a group,
-- the final results to everyone: stored whole in each row they were most
-- of the database at a large field (1.3 GB of 1.3 at 2000 teams).
--
-- A part of a mail of at least 1 kB (a text prepared for many mails, an
-- attachment) is kept in outbox_bodies, once per content (its SHA-256),
-- and cut out of the row's raw bytes; outbox_parts says where each goes back in (`at`: the offset
-- in the row's raw, in order of seq). The mail sent is the row's raw with
-- its parts put back: the very bytes built when it was queued. A row
-- without parts (every row stored before this version) is whole.
-- A body no row refers to any more (its mail sealed, and sealing changed
-- that part: `store::mail::bodies::reshare`) is deleted with the last
-- reference.
CREATE TABLE outbox_bodies (
    id      INTEGER PRIMARY KEY,
    sha256  BLOB NOT NULL UNIQUE,
    bytes   BLOB NOT NULL
);
CREATE TABLE outbox_parts (
    outbox_id  INTEGER NOT NULL REFERENCES outbox(id),
    seq        INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    body_id    INTEGER NOT NULL REFERENCES outbox_bodies(id),
    PRIMARY KEY (outbox_id, seq)
) WITHOUT ROWID;
CREATE INDEX outbox_parts_body ON outbox_parts(body_id);
