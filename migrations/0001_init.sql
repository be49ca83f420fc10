-- Initial schema. Times are TEXT 'YYYY-MM-DDTHH:MM:SSZ' written by the
-- application clock; ids are lowercase ULIDs written by the application.
-- There are no CURRENT_TIMESTAMP defaults on purpose: a forgotten time must
-- fail loudly, not be filled with another format.

CREATE TABLE users (
    id             TEXT PRIMARY KEY NOT NULL,
    provider_login TEXT NOT NULL UNIQUE,
    name           TEXT NOT NULL DEFAULT '',
    email          TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX idx_users_email ON users (email) WHERE email <> '';

-- record_id has no foreign key on purpose: intake stores the file before the
-- record row exists (the folder is named after the record id).
CREATE TABLE files (
    id          TEXT PRIMARY KEY NOT NULL,
    owner_id    TEXT NOT NULL REFERENCES users (id),
    record_id   TEXT NOT NULL,
    file_name   TEXT NOT NULL,
    size_bytes  INTEGER NOT NULL,
    format      TEXT NOT NULL,
    duration_ms INTEGER,
    created_at  TEXT NOT NULL
) STRICT;

CREATE INDEX idx_files_record ON files (record_id);

CREATE TABLE audio_records (
    id                 TEXT PRIMARY KEY NOT NULL,
    owner_id           TEXT NOT NULL REFERENCES users (id),
    title              TEXT NOT NULL DEFAULT '',
    brief              TEXT NOT NULL DEFAULT '',
    original_filename  TEXT NOT NULL DEFAULT '',
    duration_ms        INTEGER NOT NULL,
    size_bytes         INTEGER NOT NULL,
    source             TEXT NOT NULL CHECK (source IN ('http', 'telegram')),
    tg_chat_id         INTEGER,
    tg_message_id      INTEGER,
    state              TEXT NOT NULL
        CHECK (state IN ('uploaded', 'normalized', 'submitted', 'transcribed', 'done')),
    state_entered_at   TEXT NOT NULL,
    halted_at          TEXT,
    halt_reason        TEXT CHECK (halt_reason IN ('step_failed', 'attempts_exhausted', 'stuck')),
    error_text         TEXT,
    acquisition_id     TEXT,
    acquire_expires_at TEXT,
    delay_time         TEXT,
    attempts           INTEGER NOT NULL DEFAULT 0,
    original_file_id   TEXT REFERENCES files (id),
    normalized_file_id TEXT REFERENCES files (id),
    transcript_text_id TEXT,
    literary_text_id   TEXT,
    structure_id       TEXT,
    recognition_id     TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
) STRICT;

CREATE INDEX idx_audio_records_acquire ON audio_records (state, halted_at, created_at, id);
CREATE INDEX idx_audio_records_owner_page ON audio_records (owner_id, created_at, id);
CREATE UNIQUE INDEX idx_audio_records_telegram ON audio_records (tg_chat_id, tg_message_id)
    WHERE tg_chat_id IS NOT NULL AND tg_message_id IS NOT NULL;

CREATE TABLE topics (
    id         TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users (id),
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (owner_id, name)
) STRICT;

CREATE TABLE record_topics (
    record_id TEXT NOT NULL REFERENCES audio_records (id),
    topic_id  TEXT NOT NULL REFERENCES topics (id),
    PRIMARY KEY (record_id, topic_id)
) STRICT;

CREATE TRIGGER record_topics_max_five
BEFORE INSERT ON record_topics
WHEN (SELECT count(*) FROM record_topics WHERE record_id = NEW.record_id) >= 5
BEGIN
    SELECT RAISE(ABORT, 'a record has at most 5 topics');
END;

CREATE TABLE texts (
    id         TEXT PRIMARY KEY NOT NULL,
    record_id  TEXT NOT NULL REFERENCES audio_records (id),
    kind       TEXT NOT NULL CHECK (kind IN ('transcript', 'literary')),
    contents   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (record_id, kind)
) STRICT;

CREATE TABLE structures (
    id         TEXT PRIMARY KEY NOT NULL,
    record_id  TEXT NOT NULL REFERENCES audio_records (id),
    version    INTEGER NOT NULL,
    contents   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (record_id, version)
) STRICT;

-- One row per recognition operation; a record cut into parts has one row per
-- part (part_index, offset_ms). The row is written before the paid call.
CREATE TABLE recognitions (
    id           TEXT PRIMARY KEY NOT NULL,
    record_id    TEXT NOT NULL REFERENCES audio_records (id),
    part_index   INTEGER NOT NULL DEFAULT 0,
    offset_ms    INTEGER NOT NULL DEFAULT 0,
    provider     TEXT NOT NULL,
    model        TEXT NOT NULL DEFAULT '',
    external_id  TEXT,
    source_uri   TEXT,
    payload_file TEXT,
    started_at   TEXT,
    finished_at  TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (record_id, part_index)
) STRICT;

CREATE TABLE record_events (
    id           TEXT PRIMARY KEY NOT NULL,
    record_id    TEXT NOT NULL REFERENCES audio_records (id),
    origin       TEXT NOT NULL CHECK (origin IN ('pipeline', 'human')),
    step         TEXT NOT NULL,
    outcome      TEXT NOT NULL CHECK (outcome IN ('done', 'failed', 'halted', 'resumed')),
    outcome_text TEXT,
    duration_ms  INTEGER,
    created_at   TEXT NOT NULL
) STRICT;

CREATE INDEX idx_record_events_record ON record_events (record_id, created_at, id);

-- Full-text search over titles, sender file names and transcripts, kept in
-- step by triggers so no writer can forget it.
CREATE VIRTUAL TABLE record_search USING fts5 (
    record_id UNINDEXED,
    title,
    original_filename,
    transcript,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER audio_records_search_insert AFTER INSERT ON audio_records
BEGIN
    INSERT INTO record_search (record_id, title, original_filename, transcript)
    VALUES (NEW.id, NEW.title, NEW.original_filename, '');
END;

CREATE TRIGGER audio_records_search_update AFTER UPDATE OF title, original_filename
ON audio_records
BEGIN
    UPDATE record_search SET title = NEW.title, original_filename = NEW.original_filename
    WHERE record_id = NEW.id;
END;

CREATE TRIGGER texts_search_insert AFTER INSERT ON texts WHEN NEW.kind = 'transcript'
BEGIN
    UPDATE record_search SET transcript = NEW.contents WHERE record_id = NEW.record_id;
END;

CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
WHEN NEW.kind = 'transcript'
BEGIN
    UPDATE record_search SET transcript = NEW.contents WHERE record_id = NEW.record_id;
END;
