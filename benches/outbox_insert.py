#!/usr/bin/env python3
"""The outbox row's insert with and without the table's CHECK on the state
(schema 0026 against 0027): CPU time (time.process_time) per row, a
contest mail's row of 600 bytes, committed nine rows at a time like a
group's mails, five rounds alternately. Run from the repository's root:
`python3 benches/outbox_insert.py`. Uses Python's own SQLite (its version
is printed), not the server's bundled one: it measures the constraint's
share of a row, not the server."""
import re, shutil, sqlite3, tempfile, time

src=open('src/store/mod.rs').read()
names=re.findall(r'"(\d{4}_[a-z_]+\.sql)"',src)
made=[]
def db(upto):
    d=tempfile.mkdtemp(); made.append(d); p=d+'/k.db'
    c=sqlite3.connect(p, isolation_level=None)
    c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA synchronous=NORMAL'); c.execute('PRAGMA foreign_keys=ON')
    for n in names[:upto]: c.executescript(open('schema/'+n).read())
    return c
def run(c, n=12000, group=9):
    raw=b'x'*600
    t=time.process_time()
    for g in range(n//group):
        c.execute('BEGIN')
        for i in range(group):
            k=g*group+i
            c.execute("INSERT OR IGNORE INTO outbox (inbox_id, kind, recipients, sender_key, subject, message_id, raw, state, next_attempt_at, created_at, event_key, sender_domain, budget, team_id) VALUES (NULL,'grg','[\"a@example.org\"]',NULL,'KNOBELN GRG: all games, round 1, group 3',?, ?, 'queued', '2026-11-30T03:00:00.000Z','2026-11-30T03:00:00.000Z', ?, NULL, 'contest', NULL)", ('<%012x.abcdefabcdefabcdefabcdef@k>'%k, raw, 'GRG:r1:g%d:team%d'%(g,k)))
        c.execute('COMMIT')
    cpu=(time.process_time()-t)/n*1e6
    c.close()
    return cpu
i26=names.index('0027_outbox_without_state_check.sql')
print('sqlite', sqlite3.sqlite_version)
for rep in range(5):
    a=run(db(i26)); b=run(db(i26+1))
    for d in made: shutil.rmtree(d)
    made.clear()
    print('round %d: with CHECK (0026) %.2f us a row, without (0027) %.2f us a row' % (rep+1, a, b))
