-- Links for people outside: migrations/0021_record_links.sql says what and why.
CREATE TABLE record_links (
    id             TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    record_id      TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id),
    created_by     TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    secret_hash    TEXT COLLATE "C" NOT NULL UNIQUE CHECK (length(secret_hash) = 64),
    audio          BIGINT NOT NULL CHECK (audio IN (0, 1)),
    created_at     TEXT COLLATE "C" NOT NULL,
    expires_at     TEXT COLLATE "C" NOT NULL,
    views          BIGINT NOT NULL DEFAULT 0 CHECK (views >= 0),
    last_opened_at TEXT COLLATE "C"
);

CREATE INDEX idx_record_links_record ON record_links (record_id, created_at);
