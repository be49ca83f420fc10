-- The search index keyed by an integer, and its terms scoped to their owner.
--
-- Before: record_search.record_id was UNINDEXED, so every trigger's
-- `UPDATE record_search ... WHERE record_id = ...` scanned the whole index
-- inside the writer's transaction (linear in the archive), and a search
-- ranked every owner's matches before keeping the searcher's own.
--
-- Now record_search_keys gives each record a stable integer (an INTEGER
-- PRIMARY KEY, which VACUUM never renumbers, unlike the implicit rowid of
-- audio_records) and the FTS5 row of the record has that rowid: every
-- trigger reaches its row by two b-tree lookups. The indexed text is
-- `search_terms(owner_id, text)` (transcriber/db/search.py): each word
-- carries its owner's key, so one owner's match touches only their terms.
-- The index is rebuilt here from the records and transcripts themselves.

DROP TRIGGER audio_records_search_insert;
DROP TRIGGER audio_records_search_update;
DROP TRIGGER texts_search_insert;
DROP TRIGGER texts_search_update;
DROP TABLE record_search;

CREATE TABLE record_search_keys (
    id        INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL UNIQUE
) STRICT;

CREATE VIRTUAL TABLE record_search USING fts5 (
    title,
    original_filename,
    transcript,
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO record_search_keys (record_id)
SELECT id FROM audio_records ORDER BY created_at, id;

INSERT INTO record_search (rowid, title, original_filename, transcript)
SELECT k.id,
       search_terms(r.owner_id, r.title),
       search_terms(r.owner_id, r.original_filename),
       search_terms(r.owner_id, coalesce(t.contents, ''))
FROM record_search_keys AS k
JOIN audio_records AS r ON r.id = k.record_id
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript';

-- last_insert_rowid() inside a trigger is the row the trigger itself just
-- inserted (SQLite restores the outer value when the trigger ends).
CREATE TRIGGER audio_records_search_insert AFTER INSERT ON audio_records
BEGIN
    INSERT INTO record_search_keys (record_id) VALUES (NEW.id);
    INSERT INTO record_search (rowid, title, original_filename, transcript)
    VALUES (last_insert_rowid(), search_terms(NEW.owner_id, NEW.title),
            search_terms(NEW.owner_id, NEW.original_filename), '');
END;

-- WHEN: a statement that names the columns but leaves them unchanged does not
-- rewrite the index row.
CREATE TRIGGER audio_records_search_update AFTER UPDATE OF title, original_filename
ON audio_records
WHEN NEW.title IS NOT OLD.title OR NEW.original_filename IS NOT OLD.original_filename
BEGIN
    UPDATE record_search
    SET title = search_terms(NEW.owner_id, NEW.title),
        original_filename = search_terms(NEW.owner_id, NEW.original_filename)
    WHERE rowid = (SELECT k.id FROM record_search_keys AS k WHERE k.record_id = NEW.id);
END;

-- The owner is part of every term: a record that changes hands is indexed again.
CREATE TRIGGER audio_records_search_owner AFTER UPDATE OF owner_id ON audio_records
WHEN NEW.owner_id IS NOT OLD.owner_id
BEGIN
    UPDATE record_search
    SET title = search_terms(NEW.owner_id, NEW.title),
        original_filename = search_terms(NEW.owner_id, NEW.original_filename),
        transcript = search_terms(NEW.owner_id, coalesce(
            (SELECT t.contents FROM texts AS t
             WHERE t.record_id = NEW.id AND t.kind = 'transcript'), ''))
    WHERE rowid = (SELECT k.id FROM record_search_keys AS k WHERE k.record_id = NEW.id);
END;

CREATE TRIGGER audio_records_search_delete AFTER DELETE ON audio_records
BEGIN
    DELETE FROM record_search
    WHERE rowid = (SELECT k.id FROM record_search_keys AS k WHERE k.record_id = OLD.id);
    DELETE FROM record_search_keys WHERE record_id = OLD.id;
END;

CREATE TRIGGER texts_search_insert AFTER INSERT ON texts WHEN NEW.kind = 'transcript'
BEGIN
    UPDATE record_search
    SET transcript = search_terms(
        (SELECT r.owner_id FROM audio_records AS r WHERE r.id = NEW.record_id), NEW.contents)
    WHERE rowid = (SELECT k.id FROM record_search_keys AS k WHERE k.record_id = NEW.record_id);
END;

CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
WHEN NEW.kind = 'transcript' AND NEW.contents IS NOT OLD.contents
BEGIN
    UPDATE record_search
    SET transcript = search_terms(
        (SELECT r.owner_id FROM audio_records AS r WHERE r.id = NEW.record_id), NEW.contents)
    WHERE rowid = (SELECT k.id FROM record_search_keys AS k WHERE k.record_id = NEW.record_id);
END;

CREATE TRIGGER texts_search_delete AFTER DELETE ON texts WHEN OLD.kind = 'transcript'
BEGIN
    UPDATE record_search SET transcript = ''
    WHERE rowid = (SELECT k.id FROM record_search_keys AS k WHERE k.record_id = OLD.record_id);
END;
