-- The archive describes itself (issue 33, docs/describer.md): a title, a brief and
-- topics written for each record by the describer, which never overwrites what a
-- person set; the topics join the search index.

-- Where each of the three fields came from: 'auto' (the describer wrote it),
-- 'human' (a person set it, or cleared it), NULL (nobody yet). The describer
-- writes only a field that is not 'human'. `described_by` names the describer
-- of the automatic fields ('extractive', 'openai:<model>').
ALTER TABLE audio_records ADD COLUMN title_origin TEXT CHECK (title_origin IN ('auto', 'human'));
ALTER TABLE audio_records ADD COLUMN brief_origin TEXT CHECK (brief_origin IN ('auto', 'human'));
ALTER TABLE audio_records ADD COLUMN topics_origin TEXT CHECK (topics_origin IN ('auto', 'human'));
ALTER TABLE audio_records ADD COLUMN described_by TEXT NOT NULL DEFAULT '';
-- The record's topic names as a JSON array, kept by the triggers on record_topics
-- below: the search triggers re-index the row from it, and delete exactly the
-- names it was indexed with (a contentless FTS5 row can only be removed so).
ALTER TABLE audio_records ADD COLUMN topic_names TEXT NOT NULL DEFAULT '[]';

-- Everything set before this migration was set by a person.
UPDATE audio_records SET title_origin = 'human' WHERE title <> '';
UPDATE audio_records SET brief_origin = 'human' WHERE brief <> '';
UPDATE audio_records
SET topics_origin = 'human',
    topic_names = (SELECT json_group_array(name) FROM (
        SELECT t.name FROM record_topics AS rt JOIN topics AS t ON t.id = rt.topic_id
        WHERE rt.record_id = audio_records.id ORDER BY t.name))
WHERE id IN (SELECT record_id FROM record_topics);

-- The describer's durable queue: one row per record, written (or set pending
-- again, with the next generation) in the writer transaction of `done`. The
-- describer's write is conditional on the generation it read, so a description
-- of an older transcript never lands over a newer request. Failures retry with
-- backoff; `failed` after the last attempt. Nothing here halts or re-opens a record.
CREATE TABLE describe_jobs (
    record_id       TEXT PRIMARY KEY REFERENCES audio_records (id) ON DELETE CASCADE,
    generation      INTEGER NOT NULL DEFAULT 1,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    error           TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
) STRICT;
-- Only pending rows are looked for: the partial index is as small as the queue.
CREATE INDEX idx_describe_jobs_due ON describe_jobs (next_attempt_at, record_id)
    WHERE state = 'pending';

-- `topic_names` is written by the commands that change a record's topics
-- (`transcriber.db.commands.edits.replace_topics`), once per change: a trigger per
-- `record_topics` row would re-index the record (its whole transcript stemmed
-- twice) once for every topic added or dropped.

-- The topics join the search index as a column of their own: the FTS5 table is
-- rebuilt empty and every record waits for its row again (`indexed = 0`), which
-- the service fills in batches as after migration 0012
-- (transcriber/service/search_index.py); a record written meanwhile is indexed
-- by its trigger at once.
DROP TRIGGER audio_records_search_insert;
DROP TRIGGER audio_records_search_update;
DROP TRIGGER audio_records_search_delete;
DROP TRIGGER texts_search_insert;
DROP TRIGGER texts_search_update;
DROP TRIGGER texts_search_delete;
DROP TABLE record_search;

UPDATE record_search_keys SET indexed = 0;

CREATE VIRTUAL TABLE record_search USING fts5 (
    title,
    brief,
    original_filename,
    transcript,
    speakers,
    topics,
    forms,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- How many of an owner's records hold a term, by column (the extractive
-- describer weighs a transcript's words against the owner's archive: a word in
-- every recording says little about this one). Read by term only.
CREATE VIRTUAL TABLE record_search_terms USING fts5vocab (record_search, 'col');

CREATE TRIGGER audio_records_search_insert AFTER INSERT ON audio_records
BEGIN
    INSERT INTO record_search_keys (record_id, indexed) VALUES (NEW.id, 1);
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    VALUES (last_insert_rowid(), search_stems(NEW.owner_id, NEW.title), search_stems(NEW.owner_id, NEW.brief),
           search_stems(NEW.owner_id, NEW.original_filename), search_stems(NEW.owner_id, ''),
           search_stems(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names))),
           search_stems(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.topic_names))),
           search_forms(NEW.owner_id, NEW.title, NEW.brief, NEW.original_filename, '',
                        (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(NEW.topic_names))));
END;

CREATE TRIGGER audio_records_search_update
AFTER UPDATE OF title, brief, original_filename, owner_id, speaker_names, topic_names ON audio_records
WHEN NEW.title IS NOT OLD.title OR NEW.brief IS NOT OLD.brief
  OR NEW.original_filename IS NOT OLD.original_filename OR NEW.owner_id IS NOT OLD.owner_id
  OR NEW.speaker_names IS NOT OLD.speaker_names OR NEW.topic_names IS NOT OLD.topic_names
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT 'delete', k.id, search_stems(OLD.owner_id, OLD.title), search_stems(OLD.owner_id, OLD.brief),
           search_stems(OLD.owner_id, OLD.original_filename), search_stems(OLD.owner_id, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), '')),
           search_stems(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names))),
           search_stems(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.topic_names))),
           search_forms(OLD.owner_id, OLD.title, OLD.brief, OLD.original_filename, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''),
                        (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(OLD.topic_names)))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT k.id, search_stems(NEW.owner_id, NEW.title), search_stems(NEW.owner_id, NEW.brief),
           search_stems(NEW.owner_id, NEW.original_filename), search_stems(NEW.owner_id, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = NEW.id AND t.kind = 'transcript'), '')),
           search_stems(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names))),
           search_stems(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.topic_names))),
           search_forms(NEW.owner_id, NEW.title, NEW.brief, NEW.original_filename, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = NEW.id AND t.kind = 'transcript'), ''),
                        (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(NEW.topic_names)))
    FROM record_search_keys AS k WHERE k.record_id = NEW.id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = NEW.id AND indexed = 0;
END;

CREATE TRIGGER audio_records_search_delete AFTER DELETE ON audio_records
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT 'delete', k.id, search_stems(OLD.owner_id, OLD.title), search_stems(OLD.owner_id, OLD.brief),
           search_stems(OLD.owner_id, OLD.original_filename), search_stems(OLD.owner_id, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), '')),
           search_stems(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names))),
           search_stems(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.topic_names))),
           search_forms(OLD.owner_id, OLD.title, OLD.brief, OLD.original_filename, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''),
                        (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(OLD.topic_names)))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id AND k.indexed = 1;
    DELETE FROM record_search_keys WHERE record_id = OLD.id;
END;

CREATE TRIGGER texts_search_insert AFTER INSERT ON texts WHEN NEW.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT 'delete', k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, ''),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.topic_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, '',
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(r.topic_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, NEW.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.topic_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, NEW.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(r.topic_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = NEW.record_id AND indexed = 0;
END;

CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
WHEN NEW.kind = 'transcript' AND NEW.contents IS NOT OLD.contents
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT 'delete', k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, OLD.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.topic_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, OLD.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(r.topic_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, NEW.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.topic_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, NEW.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(r.topic_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = NEW.record_id AND indexed = 0;
END;

CREATE TRIGGER texts_search_delete AFTER DELETE ON texts WHEN OLD.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT 'delete', k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, OLD.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.topic_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, OLD.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(r.topic_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, topics, forms)
    SELECT k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, ''),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.topic_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, '',
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)), (SELECT group_concat(value, ' ') FROM json_each(r.topic_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = OLD.record_id AND indexed = 0;
END;

