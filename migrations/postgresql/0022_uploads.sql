-- Resumable uploads: migrations/0022_uploads.sql says what and why.
CREATE TABLE uploads (
    id          TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    owner_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    length      BIGINT NOT NULL CHECK (length > 0),
    received    BIGINT NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= length),
    deferred    BIGINT NOT NULL DEFAULT 0 CHECK (deferred IN (0, 1)),
    filename    TEXT COLLATE "C" NOT NULL DEFAULT '',
    language    TEXT COLLATE "C",
    space       TEXT COLLATE "C",
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    record_id   TEXT COLLATE "C"
);
CREATE INDEX idx_uploads_owner ON uploads (owner_id, created_at);
CREATE INDEX idx_uploads_expires ON uploads (expires_at);
