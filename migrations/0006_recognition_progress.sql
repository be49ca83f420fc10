-- Progress of long recordings (docs/recognition.md).
--
-- recognition_speed: the real-time factor (seconds of work per second of
-- audio) measured on this machine, per provider and model, updated as parts
-- finish; the ETA of a record in recognition follows it. One row per model:
-- it never grows with the archive.
CREATE TABLE recognition_speed (
    provider         TEXT NOT NULL,
    model            TEXT NOT NULL,
    real_time_factor REAL NOT NULL CHECK (real_time_factor >= 0),
    samples          INTEGER NOT NULL CHECK (samples >= 1),
    updated_at       TEXT NOT NULL,
    PRIMARY KEY (provider, model)
) STRICT;

-- How far the normalization of a record has come (ffmpeg's -progress), so
-- the first minutes of a long upload are not silent. Keyed by the record id
-- without a foreign key, like files: the row is written by the normalize
-- step's holder only and is read by the doors beside the record.
CREATE TABLE normalize_progress (
    record_id  TEXT PRIMARY KEY NOT NULL,
    done_ms    INTEGER NOT NULL CHECK (done_ms >= 0),
    total_ms   INTEGER NOT NULL CHECK (total_ms >= 0),
    started_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
