-- The watched folder and a record's real way in (issue 42, docs/watched-folder.md).
--
-- `watched_files`: the SHA-256 of every file the watched folder made a record of,
-- written in the transaction that stores the record (`AcceptRecord`), so a file
-- is never read twice: after a restart, a file whose hash is here (the service
-- stopped before moving it to `done/`) is moved on without a second record.
-- Looked up by its hash only (the primary key); its rows go with their record.
CREATE TABLE watched_files (
    sha256    TEXT PRIMARY KEY NOT NULL CHECK (length(sha256) = 64),
    record_id TEXT NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    taken_at  TEXT NOT NULL
) STRICT;

CREATE INDEX idx_watched_files_record ON watched_files (record_id);

-- How a record came in through the web door or beside it: the web app (`web`),
-- a bearer token's client (`api`: scripts, `transcriber upload`), the local
-- command (`cli`: `transcriber transcribe`) or the watched folder (`folder`).
-- NULL on records stored before it (and Telegram's, whose `source` says it).
ALTER TABLE audio_records ADD COLUMN via TEXT
    CHECK (via IN ('web', 'api', 'cli', 'folder'));
