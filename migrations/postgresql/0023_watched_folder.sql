-- The watched folder's remembered files and a record's way in:
-- migrations/0023_watched_folder.sql says what and why.
CREATE TABLE watched_files (
    sha256    TEXT COLLATE "C" PRIMARY KEY NOT NULL CHECK (length(sha256) = 64),
    record_id TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    taken_at  TEXT COLLATE "C" NOT NULL
);

CREATE INDEX idx_watched_files_record ON watched_files (record_id);

ALTER TABLE audio_records ADD COLUMN via TEXT COLLATE "C"
    CHECK (via IN ('web', 'api', 'cli', 'folder'));
