-- The archive people work in: language, transcript revisions, topic lookups,
-- and the brief in the search index.

-- The spoken language the owner asked for ('auto' lets the recognizer decide)
-- and the one the recognizer reported (NULL until it reports one).
ALTER TABLE audio_records ADD COLUMN language TEXT NOT NULL DEFAULT 'auto';
ALTER TABLE audio_records ADD COLUMN detected_language TEXT;
-- The transcript's revision: 0 before any transcript, raised by every new
-- recognizer transcript and by every correction, so a correction made
-- against an older one is refused (409) instead of overwriting it.
ALTER TABLE audio_records ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

-- The owner's corrections of a transcript, one row per revision; the
-- recognizer's original stays in `structures`. A new recognizer transcript
-- removes them (they corrected a text that is gone).
CREATE TABLE structure_revisions (
    record_id  TEXT NOT NULL REFERENCES audio_records (id),
    revision   INTEGER NOT NULL,
    contents   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (record_id, revision)
) STRICT;

-- A topic's records (the topic filter, the counts, a topic's removal).
CREATE INDEX idx_record_topics_topic ON record_topics (topic_id, record_id);

-- The brief joins the search index: the FTS5 table gets a column, so it is
-- rebuilt (contentless, keyed by record_search_keys as in 0003) with every
-- trigger that writes it.
DROP TRIGGER audio_records_search_insert;
DROP TRIGGER audio_records_search_update;
DROP TRIGGER audio_records_search_delete;
DROP TRIGGER texts_search_insert;
DROP TRIGGER texts_search_update;
DROP TRIGGER texts_search_delete;
DROP TABLE record_search;

CREATE VIRTUAL TABLE record_search USING fts5 (
    title,
    brief,
    original_filename,
    transcript,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO record_search (rowid, title, brief, original_filename, transcript)
SELECT k.id,
       search_terms(r.owner_id, r.title),
       search_terms(r.owner_id, r.brief),
       search_terms(r.owner_id, r.original_filename),
       search_terms(r.owner_id, coalesce(t.contents, ''))
FROM record_search_keys AS k
JOIN audio_records AS r ON r.id = k.record_id
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript';

CREATE TRIGGER audio_records_search_insert AFTER INSERT ON audio_records
BEGIN
    INSERT INTO record_search_keys (record_id) VALUES (NEW.id);
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript)
    VALUES (last_insert_rowid(), search_terms(NEW.owner_id, NEW.title),
            search_terms(NEW.owner_id, NEW.brief),
            search_terms(NEW.owner_id, NEW.original_filename), '');
END;

CREATE TRIGGER audio_records_search_update
AFTER UPDATE OF title, brief, original_filename, owner_id ON audio_records
WHEN NEW.title IS NOT OLD.title OR NEW.brief IS NOT OLD.brief
  OR NEW.original_filename IS NOT OLD.original_filename OR NEW.owner_id IS NOT OLD.owner_id
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(OLD.owner_id, OLD.title),
           search_terms(OLD.owner_id, OLD.brief),
           search_terms(OLD.owner_id, OLD.original_filename),
           search_terms(OLD.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript)
    SELECT k.id, search_terms(NEW.owner_id, NEW.title),
           search_terms(NEW.owner_id, NEW.brief),
           search_terms(NEW.owner_id, NEW.original_filename),
           search_terms(NEW.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = NEW.id AND t.kind = 'transcript'), ''))
    FROM record_search_keys AS k WHERE k.record_id = NEW.id;
END;

CREATE TRIGGER audio_records_search_delete AFTER DELETE ON audio_records
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(OLD.owner_id, OLD.title),
           search_terms(OLD.owner_id, OLD.brief),
           search_terms(OLD.owner_id, OLD.original_filename),
           search_terms(OLD.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id;
    DELETE FROM record_search_keys WHERE record_id = OLD.id;
END;

CREATE TRIGGER texts_search_insert AFTER INSERT ON texts WHEN NEW.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), ''
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript)
    SELECT k.id, search_terms(r.owner_id, r.title), search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, NEW.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
END;

CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
WHEN NEW.kind = 'transcript' AND NEW.contents IS NOT OLD.contents
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, OLD.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript)
    SELECT k.id, search_terms(r.owner_id, r.title), search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, NEW.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
END;

CREATE TRIGGER texts_search_delete AFTER DELETE ON texts WHEN OLD.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, OLD.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript)
    SELECT k.id, search_terms(r.owner_id, r.title), search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), ''
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
END;
