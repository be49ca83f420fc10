-- Links for people outside (issue 41, docs/sharing.md "Links").
--
-- A link shows one record, read-only, to whoever holds its URL (`/s/<secret>`).
-- Only the SHA-256 of the secret is kept (`secret_hash`, like `api_tokens`):
-- a copy of the database opens nothing. Opening finds the row by that hash (the
-- UNIQUE index); an owner's list reads a record's rows by `record_id`.
-- A revoked link's row is deleted: it answers the same 404 as one that never
-- existed. Expired rows stay listed until the next link of the record is made
-- (which deletes them), so the table grows with the links people hold, at most
-- `links.per_record_max` a record, not with the views: `views` and
-- `last_opened_at` count the openings on the row itself.
CREATE TABLE record_links (
    id             TEXT PRIMARY KEY NOT NULL,
    record_id      TEXT NOT NULL REFERENCES audio_records (id),
    created_by     TEXT NOT NULL REFERENCES users (id),
    secret_hash    TEXT NOT NULL UNIQUE CHECK (length(secret_hash) = 64),
    audio          INTEGER NOT NULL CHECK (audio IN (0, 1)),
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    views          INTEGER NOT NULL DEFAULT 0 CHECK (views >= 0),
    last_opened_at TEXT
) STRICT;

CREATE INDEX idx_record_links_record ON record_links (record_id, created_at);
