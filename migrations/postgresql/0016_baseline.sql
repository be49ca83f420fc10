-- The PostgreSQL schema as of version 16, the first version that runs on
-- PostgreSQL: the SQLite set's 0001-0016 in one file. Later versions add a
-- file to both sets under the same number.
--
-- Types mirror SQLite's so rows read the same on both engines: times are
-- TEXT in the service's fixed format (they sort as text), flags are 0/1
-- integers, JSON is TEXT, integers are BIGINT (SQLite's are 64-bit), and text
-- compares bytewise (COLLATE "C", SQLite's BINARY), so ORDER BY created_at, id
-- and every range on ids and times agree with SQLite whatever the database's locale.

CREATE TABLE users (
    id             TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    provider_login TEXT COLLATE "C" NOT NULL UNIQUE,
    name           TEXT COLLATE "C" NOT NULL DEFAULT '',
    email          TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at     TEXT COLLATE "C" NOT NULL,
    updated_at     TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX idx_users_email ON users (email) WHERE email <> '';

CREATE TABLE files (
    id          TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    owner_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    record_id   TEXT COLLATE "C" NOT NULL,
    file_name   TEXT COLLATE "C" NOT NULL,
    size_bytes  BIGINT NOT NULL,
    format      TEXT COLLATE "C" NOT NULL,
    duration_ms BIGINT,
    created_at  TEXT COLLATE "C" NOT NULL,
    channels    BIGINT NOT NULL DEFAULT 1 CHECK (channels IN (1, 2))
);
CREATE INDEX idx_files_record ON files (record_id);

CREATE TABLE audio_records (
    id                 TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    owner_id           TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    title              TEXT COLLATE "C" NOT NULL DEFAULT '',
    brief              TEXT COLLATE "C" NOT NULL DEFAULT '',
    original_filename  TEXT COLLATE "C" NOT NULL DEFAULT '',
    duration_ms        BIGINT NOT NULL,
    size_bytes         BIGINT NOT NULL,
    source             TEXT COLLATE "C" NOT NULL CHECK (source IN ('http', 'telegram')),
    tg_chat_id         BIGINT,
    tg_message_id      BIGINT,
    state              TEXT COLLATE "C" NOT NULL
        CHECK (state IN ('uploaded', 'normalized', 'submitted', 'transcribed', 'done')),
    state_entered_at   TEXT COLLATE "C" NOT NULL,
    halted_at          TEXT COLLATE "C",
    halt_reason        TEXT COLLATE "C" CHECK (halt_reason IN ('step_failed', 'attempts_exhausted', 'stuck')),
    error_text         TEXT COLLATE "C",
    acquisition_id     TEXT COLLATE "C",
    acquire_expires_at TEXT COLLATE "C",
    delay_time         TEXT COLLATE "C",
    attempts           BIGINT NOT NULL DEFAULT 0,
    original_file_id   TEXT COLLATE "C" REFERENCES files (id),
    normalized_file_id TEXT COLLATE "C" REFERENCES files (id),
    transcript_text_id TEXT COLLATE "C",
    literary_text_id   TEXT COLLATE "C",
    structure_id       TEXT COLLATE "C",
    recognition_id     TEXT COLLATE "C",
    created_at         TEXT COLLATE "C" NOT NULL,
    updated_at         TEXT COLLATE "C" NOT NULL,
    lease_taken_over   BIGINT NOT NULL DEFAULT 0 CHECK (lease_taken_over IN (0, 1)),
    language           TEXT COLLATE "C" NOT NULL DEFAULT 'auto',
    detected_language  TEXT COLLATE "C",
    revision           BIGINT NOT NULL DEFAULT 0,
    speaker_names      TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    speakers           BIGINT CHECK (speakers BETWEEN 1 AND 8),
    title_origin       TEXT COLLATE "C" CHECK (title_origin IN ('auto', 'human')),
    brief_origin       TEXT COLLATE "C" CHECK (brief_origin IN ('auto', 'human')),
    topics_origin      TEXT COLLATE "C" CHECK (topics_origin IN ('auto', 'human')),
    described_by       TEXT COLLATE "C" NOT NULL DEFAULT '',
    topic_names        TEXT COLLATE "C" NOT NULL DEFAULT '[]'
);
CREATE INDEX idx_audio_records_acquire ON audio_records (state, halted_at, created_at, id);
-- The claim's own order (P2): the claimable records, oldest first, so that ORDER BY
-- created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED walks the queue instead of sorting it
-- (PostgreSQL cannot merge the acquire index's ranges of several states in order).
CREATE INDEX idx_audio_records_claimable ON audio_records (created_at, id)
    WHERE halted_at IS NULL AND state IN ('uploaded', 'normalized', 'submitted', 'transcribed');
CREATE INDEX idx_audio_records_owner_page ON audio_records (owner_id, created_at, id);
-- The describer's walk over done records in order (queries.describe.DONE_PAGE): on SQLite
-- the acquire index serves it; PostgreSQL orders by an index only after equalities,
-- and `halted_at IS NULL` is not one.
CREATE INDEX idx_audio_records_done ON audio_records (created_at, id)
    WHERE state = 'done' AND halted_at IS NULL;
CREATE UNIQUE INDEX idx_audio_records_telegram ON audio_records (tg_chat_id, tg_message_id)
    WHERE tg_chat_id IS NOT NULL AND tg_message_id IS NOT NULL;
CREATE INDEX idx_audio_records_original_file ON audio_records (original_file_id)
    WHERE original_file_id IS NOT NULL;
CREATE INDEX idx_audio_records_normalized_file ON audio_records (normalized_file_id)
    WHERE normalized_file_id IS NOT NULL;
CREATE INDEX idx_audio_records_halted ON audio_records (halt_reason)
    WHERE halted_at IS NOT NULL;
CREATE INDEX idx_audio_records_owner_queued ON audio_records (owner_id, duration_ms)
    WHERE halted_at IS NULL AND state <> 'done';

CREATE TABLE topics (
    id         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    owner_id   TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    name       TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (owner_id, name)
);

CREATE TABLE record_topics (
    record_id TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id),
    topic_id  TEXT COLLATE "C" NOT NULL REFERENCES topics (id),
    PRIMARY KEY (record_id, topic_id)
);
CREATE INDEX idx_record_topics_topic ON record_topics (topic_id, record_id);

CREATE FUNCTION record_topics_max_five() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM record_topics WHERE record_id = NEW.record_id) >= 5 THEN
        RAISE EXCEPTION 'a record has at most 5 topics' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER record_topics_max_five BEFORE INSERT ON record_topics
FOR EACH ROW EXECUTE FUNCTION record_topics_max_five();

CREATE FUNCTION record_topics_drop_unused() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM record_topics WHERE topic_id = OLD.topic_id) THEN
        DELETE FROM topics WHERE id = OLD.topic_id;
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER record_topics_drop_unused AFTER DELETE ON record_topics
FOR EACH ROW EXECUTE FUNCTION record_topics_drop_unused();

CREATE TABLE texts (
    id         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    record_id  TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id),
    kind       TEXT COLLATE "C" NOT NULL CHECK (kind IN ('transcript', 'literary')),
    contents   TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (record_id, kind)
);

CREATE TABLE structures (
    id         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    record_id  TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id),
    version    BIGINT NOT NULL,
    contents   TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (record_id, version)
);

CREATE TABLE structure_revisions (
    record_id  TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id),
    revision   BIGINT NOT NULL,
    contents   TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (record_id, revision)
);

CREATE TABLE recognitions (
    id           TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    record_id    TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id),
    part_index   BIGINT NOT NULL DEFAULT 0,
    offset_ms    BIGINT NOT NULL DEFAULT 0,
    provider     TEXT COLLATE "C" NOT NULL,
    model        TEXT COLLATE "C" NOT NULL DEFAULT '',
    external_id  TEXT COLLATE "C",
    source_uri   TEXT COLLATE "C",
    payload_file TEXT COLLATE "C",
    started_at   TEXT COLLATE "C",
    finished_at  TEXT COLLATE "C",
    created_at   TEXT COLLATE "C" NOT NULL,
    updated_at   TEXT COLLATE "C" NOT NULL,
    channel      BIGINT CHECK (channel IN (0, 1)),
    UNIQUE (record_id, part_index)
);

CREATE TABLE record_events (
    id           TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    record_id    TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id),
    origin       TEXT COLLATE "C" NOT NULL CHECK (origin IN ('pipeline', 'human')),
    step         TEXT COLLATE "C" NOT NULL,
    outcome      TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('done', 'failed', 'halted', 'resumed')),
    outcome_text TEXT COLLATE "C",
    duration_ms  BIGINT,
    created_at   TEXT COLLATE "C" NOT NULL
);
CREATE INDEX idx_record_events_record ON record_events (record_id, created_at, id);

CREATE TABLE recognition_speed (
    provider         TEXT COLLATE "C" NOT NULL,
    model            TEXT COLLATE "C" NOT NULL,
    real_time_factor DOUBLE PRECISION NOT NULL CHECK (real_time_factor >= 0),
    samples          BIGINT NOT NULL CHECK (samples >= 1),
    updated_at       TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (provider, model)
);

CREATE TABLE normalize_progress (
    record_id  TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    done_ms    BIGINT NOT NULL CHECK (done_ms >= 0),
    total_ms   BIGINT NOT NULL CHECK (total_ms >= 0),
    started_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);

CREATE TABLE telegram_outbox (
    id              TEXT COLLATE "C" PRIMARY KEY,
    record_id       TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    chat_id         BIGINT NOT NULL,
    reply_to        BIGINT,
    kind            TEXT COLLATE "C" NOT NULL CHECK (kind IN ('transcript', 'halt_notice')),
    halt_reason     TEXT COLLATE "C",
    language        TEXT COLLATE "C" NOT NULL DEFAULT '',
    state           TEXT COLLATE "C" NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'ended')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT COLLATE "C" NOT NULL,
    created_at      TEXT COLLATE "C" NOT NULL,
    sent_at         TEXT COLLATE "C",
    tg_message_id   BIGINT,
    end_reason      TEXT COLLATE "C"
);
CREATE INDEX idx_outbox_due ON telegram_outbox (next_attempt_at, chat_id) WHERE state = 'pending';
CREATE INDEX idx_outbox_chat ON telegram_outbox (chat_id, created_at, id) WHERE state = 'pending';
CREATE INDEX idx_outbox_record ON telegram_outbox (record_id);

CREATE TABLE telegram_status (
    record_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES audio_records (id) ON DELETE CASCADE,
    chat_id    BIGINT NOT NULL,
    message_id BIGINT,
    language   TEXT COLLATE "C" NOT NULL,
    shown_text TEXT COLLATE "C" NOT NULL DEFAULT '',
    live       BIGINT NOT NULL DEFAULT 1,
    updated_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX idx_status_live ON telegram_status (record_id) WHERE live = 1 AND message_id IS NOT NULL;

CREATE TABLE api_tokens (
    id           TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (length(name) <= 100),
    scope        TEXT COLLATE "C" NOT NULL CHECK (scope IN ('read', 'write')),
    token_hash   TEXT COLLATE "C" NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    created_at   TEXT COLLATE "C" NOT NULL,
    expires_at   TEXT COLLATE "C",
    last_used_at TEXT COLLATE "C"
);
CREATE INDEX idx_api_tokens_user ON api_tokens (user_id, created_at);

CREATE TABLE webhooks (
    id              TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    owner_id        TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    url             TEXT COLLATE "C" NOT NULL,
    secret          TEXT COLLATE "C" NOT NULL,
    events          TEXT COLLATE "C" NOT NULL CHECK (events::jsonb IS NOT NULL),
    created_at      TEXT COLLATE "C" NOT NULL,
    disabled_at     TEXT COLLATE "C",
    disabled_reason TEXT COLLATE "C"
);
CREATE INDEX idx_webhooks_owner ON webhooks (owner_id, created_at, id);

CREATE TABLE webhook_deliveries (
    id              TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    webhook_id      TEXT COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event           TEXT COLLATE "C" NOT NULL
        CHECK (event IN ('record.done', 'record.halted', 'record.deleted')),
    record_id       TEXT COLLATE "C" NOT NULL,
    record_json     TEXT COLLATE "C" NOT NULL,
    body            BYTEA,
    state           TEXT COLLATE "C" NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT COLLATE "C" NOT NULL,
    last_status     BIGINT,
    last_error      TEXT COLLATE "C",
    created_at      TEXT COLLATE "C" NOT NULL,
    finished_at     TEXT COLLATE "C"
);
CREATE INDEX idx_webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
CREATE INDEX idx_webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);

CREATE TABLE describe_jobs (
    record_id       TEXT COLLATE "C" PRIMARY KEY REFERENCES audio_records (id) ON DELETE CASCADE,
    generation      BIGINT NOT NULL DEFAULT 1,
    state           TEXT COLLATE "C" NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT COLLATE "C" NOT NULL,
    error           TEXT COLLATE "C",
    created_at      TEXT COLLATE "C" NOT NULL,
    updated_at      TEXT COLLATE "C" NOT NULL
);
CREATE INDEX idx_describe_jobs_due ON describe_jobs (next_attempt_at, record_id)
    WHERE state = 'pending';

CREATE TABLE voice_profiles (
    id         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    owner_id   TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    name       TEXT COLLATE "C" NOT NULL,
    centroid   BYTEA NOT NULL,
    exemplars  BYTEA NOT NULL,
    talk_ms    BIGINT NOT NULL DEFAULT 0,
    records    BIGINT NOT NULL DEFAULT 0,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (owner_id, name)
);

CREATE TABLE voice_profile_sources (
    profile_id TEXT COLLATE "C" NOT NULL REFERENCES voice_profiles (id) ON DELETE CASCADE,
    record_id  TEXT COLLATE "C" NOT NULL,
    speaker    TEXT COLLATE "C" NOT NULL,
    talk_ms    BIGINT NOT NULL,
    centroid   BYTEA NOT NULL,
    exemplars  BYTEA NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (profile_id, record_id, speaker)
);
CREATE INDEX idx_voice_sources_record ON voice_profile_sources (record_id, speaker);

CREATE TABLE record_voices (
    record_id   TEXT COLLATE "C" NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    speaker     TEXT COLLATE "C" NOT NULL,
    talk_ms     BIGINT NOT NULL,
    centroid    BYTEA NOT NULL,
    exemplars   BYTEA NOT NULL,
    profile_id  TEXT COLLATE "C" REFERENCES voice_profiles (id) ON DELETE SET NULL,
    similarity  DOUBLE PRECISION,
    rejected    TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    PRIMARY KEY (record_id, speaker)
);
CREATE INDEX idx_record_voices_profile ON record_voices (profile_id)
    WHERE profile_id IS NOT NULL;

CREATE TABLE record_voice_windows (
    record_id TEXT COLLATE "C" PRIMARY KEY NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    windows   BYTEA NOT NULL
);

-- Search: one row per record, its terms as a tsvector of the same owner-keyed
-- stems and forms the SQLite index holds (computed by `transcriber.db.search`,
-- the one normalization for both engines), weighted by column. The triggers
-- only mark a row stale; the writer recomputes stale rows in Python before the
-- transaction that staled them commits (`transcriber.db.postgres.writer`), so a
-- committed change is always searchable.
CREATE TABLE record_search (
    record_id TEXT COLLATE "C" PRIMARY KEY NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    stale     BIGINT NOT NULL DEFAULT 1 CHECK (stale IN (0, 1)),
    terms     TSVECTOR NOT NULL DEFAULT ''::tsvector
);
CREATE INDEX idx_record_search_terms ON record_search USING GIN (terms);
CREATE INDEX idx_record_search_stale ON record_search (record_id) WHERE stale = 1;

CREATE FUNCTION record_search_new_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO record_search (record_id, stale) VALUES (NEW.id, 1);
    RETURN NEW;
END $$;
CREATE TRIGGER audio_records_search_insert AFTER INSERT ON audio_records
FOR EACH ROW EXECUTE FUNCTION record_search_new_record();

CREATE FUNCTION record_search_record_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE record_search SET stale = 1 WHERE record_id = NEW.id AND stale = 0;
    RETURN NEW;
END $$;
CREATE TRIGGER audio_records_search_update
AFTER UPDATE OF title, brief, original_filename, owner_id, speaker_names, topic_names
ON audio_records FOR EACH ROW
WHEN (NEW.title IS DISTINCT FROM OLD.title OR NEW.brief IS DISTINCT FROM OLD.brief
      OR NEW.original_filename IS DISTINCT FROM OLD.original_filename
      OR NEW.owner_id IS DISTINCT FROM OLD.owner_id
      OR NEW.speaker_names IS DISTINCT FROM OLD.speaker_names
      OR NEW.topic_names IS DISTINCT FROM OLD.topic_names)
EXECUTE FUNCTION record_search_record_changed();

CREATE FUNCTION record_search_text_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed TEXT COLLATE "C" := CASE WHEN TG_OP = 'DELETE' THEN OLD.record_id ELSE NEW.record_id END;
BEGIN
    UPDATE record_search SET stale = 1 WHERE record_id = changed AND stale = 0;
    RETURN NULL;
END $$;
CREATE TRIGGER texts_search_insert AFTER INSERT ON texts
FOR EACH ROW WHEN (NEW.kind = 'transcript') EXECUTE FUNCTION record_search_text_changed();
CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
FOR EACH ROW WHEN (NEW.kind = 'transcript' AND NEW.contents IS DISTINCT FROM OLD.contents)
EXECUTE FUNCTION record_search_text_changed();
CREATE TRIGGER texts_search_delete AFTER DELETE ON texts
FOR EACH ROW WHEN (OLD.kind = 'transcript') EXECUTE FUNCTION record_search_text_changed();
