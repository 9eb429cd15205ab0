#!/usr/bin/env python3
"""The outbox row's insert with and without the unique index on
`message_id` (schema 0034 against 0035): CPU time (time.process_time) per
row, a contest mail's row of 600 bytes with a growing Message-ID (the
milliseconds, then random hex, as `new_message_id` makes it) and an
event key of its group, committed nine rows at a time like a group's
mails, five rounds alternately. Run from the repository's root:
`python3 benches/outbox_message_id.py`. Uses Python's own SQLite (its
version is printed), not the server's bundled one: it measures the
index's share of a row, not the server."""
import os, re, shutil, sqlite3, tempfile, time

src = open('src/store/mod.rs').read()
names = re.findall(r'"(\d{4}_[a-z_]+\.sql)"', src)
made = []


def db(upto):
    d = tempfile.mkdtemp(); made.append(d); p = d + '/k.db'
    c = sqlite3.connect(p, isolation_level=None)
    c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA synchronous=NORMAL')
    c.execute('PRAGMA secure_delete=ON')
    for n in names[:upto]:
        c.executescript(open('schema/' + n).read())
    c.execute('PRAGMA foreign_keys=ON')
    return c


def run(c, n=18000, group=9):
    raw = b'x' * 600
    t = time.process_time()
    ms = 0x18f00000000
    for g in range(n // group):
        c.execute('BEGIN IMMEDIATE')
        for i in range(group):
            k = g * group + i
            ms += 1
            c.execute("INSERT OR IGNORE INTO outbox (inbox_id, kind, recipients, sender_key, subject, message_id, raw, state, next_attempt_at, created_at, event_key, sender_domain, budget, team_id) VALUES (NULL,'grg','[\"a@example.org\"]',NULL,'KNOBELN GRG: all games, round 1, group 3',?, ?, 'queued', '2026-11-30T03:00:00.000Z','2026-11-30T03:00:00.000Z', ?, NULL, 'contest', NULL)",
                      ('<%012x.%s@knobeln.example.org>' % (ms, os.urandom(12).hex()), raw, 'GRG:r%d:g%d:team%d' % (g % 7, g, k)))
        c.execute('COMMIT')
    cpu = (time.process_time() - t) / n * 1e6
    c.close()
    return cpu


last = names.index('0035_outbox_message_id_not_unique.sql')
print('sqlite', sqlite3.sqlite_version)
for rep in range(5):
    a = run(db(last)); b = run(db(last + 1))
    for d in made:
        shutil.rmtree(d)
    made.clear()
    print('round %d: unique message_id (0034) %.2f us a row, without (0035) %.2f us a row' % (rep + 1, a, b))
