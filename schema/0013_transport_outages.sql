-- 0013: the mail transports' outages as `serve` sees them (issue 25), so
-- that `knobeln status`, another process, says when taking in or sending
-- mail fails and since when. A row per side that is down; gone when it
-- works again.

CREATE TABLE transport_outages (
    side   TEXT PRIMARY KEY,      -- "SMTP sending to host:port", ...
    since  TEXT NOT NULL,         -- when it went down
    cause  TEXT NOT NULL,         -- the last error
    tries  INTEGER NOT NULL       -- failed tries since
);
