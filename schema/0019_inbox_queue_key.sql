-- 0019 (issue 35): the compile queue reads no mail twice. A pending mail's
-- head is classified once, when the queue first sees it: '-' (not a
-- compile request) or 'c:' and the sender the queue takes turns by.
-- NULL: not seen yet. Each cycle then reads only the keys.
ALTER TABLE inbox ADD COLUMN queue_key TEXT;
CREATE INDEX inbox_queue ON inbox(state, queue_key, id);
