-- 0008: secrets at rest. From this version on, a mail is sealed (every
-- authentification string in it masked) once it is processed (inbox) or
-- sent (outbox), and a stored source keeps its <<FROM>> header masked. A
-- database written by an older version still holds them whole: this task
-- asks the server to seal that backlog once, at its first processing
-- pass, and to rebuild the file (VACUUM) so that nothing of the old bytes
-- stays in free pages. The row is removed when the task is done.

CREATE TABLE maintenance_tasks (
    name TEXT PRIMARY KEY             -- 'seal_backlog'
);

INSERT INTO maintenance_tasks (name) VALUES ('seal_backlog');
