-- Known voices (issue 34; docs/speakers.md, "Known voices"). Voice embeddings
-- are biometric data: they live in these tables only (never in a file, an
-- export or a log), go with the database into backups, and `transcriber
-- voices purge [LOGIN]` deletes them. Vectors are little-endian float32
-- (256 a vector) unless said otherwise (transcriber/voiceprints.py).

-- The owner's named voices. centroid: one vector; exemplars: up to 8 vectors;
-- talk_ms and records: what its sources add up to (kept here so the list of
-- voices reads one row each).
CREATE TABLE voice_profiles (
    id         TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users (id),
    name       TEXT NOT NULL,
    centroid   BLOB NOT NULL,
    exemplars  BLOB NOT NULL,
    talk_ms    INTEGER NOT NULL DEFAULT 0,
    records    INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (owner_id, name)
) STRICT;

-- What a profile was made of: one row per record speaker a person named (or
-- confirmed) with the profile's name, with that speaker's print as it was then
-- (so the profile is computed again when a naming is taken back, a line moves, or
-- the record goes). At most voiceprints.MAX_SOURCES a profile, the latest kept.
-- record_id is no foreign key: a profile keeps what it learned from a record the
-- owner deleted later (deleting the profile, or purging, removes it).
CREATE TABLE voice_profile_sources (
    profile_id TEXT NOT NULL REFERENCES voice_profiles (id) ON DELETE CASCADE,
    record_id  TEXT NOT NULL,
    speaker    TEXT NOT NULL,
    talk_ms    INTEGER NOT NULL,
    centroid   BLOB NOT NULL,
    exemplars  BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (profile_id, record_id, speaker)
) STRICT, WITHOUT ROWID;
-- A record speaker's naming is found from the record (a rename takes it back).
CREATE INDEX idx_voice_sources_record ON voice_profile_sources (record_id, speaker);

-- Each speaker the local engine found in a record (or a stereo call's channel):
-- its print (centroid, up to 4 exemplars, talk time) and the suggestion made for
-- it (the owner's profile and the similarity), if any. rejected: a JSON array of
-- the profile ids the owner said it is not (never suggested again for it).
CREATE TABLE record_voices (
    record_id   TEXT NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    speaker     TEXT NOT NULL,
    talk_ms     INTEGER NOT NULL,
    centroid    BLOB NOT NULL,
    exemplars   BLOB NOT NULL,
    profile_id  TEXT REFERENCES voice_profiles (id) ON DELETE SET NULL,
    similarity  REAL,
    rejected    TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (record_id, speaker)
) STRICT, WITHOUT ROWID;
CREATE INDEX idx_record_voices_profile ON record_voices (profile_id)
    WHERE profile_id IS NOT NULL;

-- A record's embedded windows (at most voiceprints.MAX_KEPT_WINDOWS, float16), from
-- which its speakers' prints are computed again when lines move between speakers.
CREATE TABLE record_voice_windows (
    record_id TEXT PRIMARY KEY NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    windows   BLOB NOT NULL
) STRICT;
