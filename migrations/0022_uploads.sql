-- Resumable uploads (tus 1.0 at /app/uploads/, issue 42; docs/api.md "Resumable
-- uploads"). One row per upload in progress: what the client declared
-- (`length`, the metadata), how many bytes are stored for good (`received`:
-- the partial file under data_dir/uploads/ may hold more after a crash; it is
-- cut back to `received` at the next PATCH), when it expires unless a PATCH
-- renews it, and the record it became. Rows leave with their bytes when they
-- expire (the sweeper, by `expires_at`); the table holds uploads in flight,
-- never the archive. `deferred` = 1: the client did not know the length at
-- creation (a recording still going on; tus's creation-defer-length): `length` is
-- the upload limit until a PATCH names the real one.
CREATE TABLE uploads (
    id          TEXT PRIMARY KEY NOT NULL,
    owner_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    length      INTEGER NOT NULL CHECK (length > 0),
    received    INTEGER NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= length),
    deferred    INTEGER NOT NULL DEFAULT 0 CHECK (deferred IN (0, 1)),
    filename    TEXT NOT NULL DEFAULT '',
    language    TEXT,
    space       TEXT,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    record_id   TEXT
) STRICT;

CREATE INDEX idx_uploads_owner ON uploads (owner_id, created_at);
CREATE INDEX idx_uploads_expires ON uploads (expires_at);
