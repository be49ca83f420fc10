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
-- trigger reaches its row by b-tree lookups. The indexed text is
-- `search_terms(owner_id, text)` (transcriber/db/search.py): each word
-- carries its owner's key, so one owner's match touches only their terms.
--
-- The FTS5 table is contentless (content=''): the words live in
-- audio_records and texts, the index keeps no second copy. A contentless row
-- is changed by the 'delete' command with exactly the values it was indexed
-- with, then a fresh insert: the triggers recompute those values from OLD.*
-- and the unchanged columns (search_terms is deterministic). The index is
-- rebuilt here from the records and transcripts themselves.

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
    content = '',
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

-- One trigger for all three columns, so a statement changing several removes
-- the row's old terms once, with the old values of each. WHEN: a statement
-- that names the columns but leaves them unchanged does not touch the index.
CREATE TRIGGER audio_records_search_update
AFTER UPDATE OF title, original_filename, owner_id ON audio_records
WHEN NEW.title IS NOT OLD.title OR NEW.original_filename IS NOT OLD.original_filename
  OR NEW.owner_id IS NOT OLD.owner_id
BEGIN
    INSERT INTO record_search (record_search, rowid, title, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(OLD.owner_id, OLD.title),
           search_terms(OLD.owner_id, OLD.original_filename),
           search_terms(OLD.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id;
    INSERT INTO record_search (rowid, title, original_filename, transcript)
    SELECT k.id, search_terms(NEW.owner_id, NEW.title),
           search_terms(NEW.owner_id, NEW.original_filename),
           search_terms(NEW.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = NEW.id AND t.kind = 'transcript'), ''))
    FROM record_search_keys AS k WHERE k.record_id = NEW.id;
END;

CREATE TRIGGER audio_records_search_delete AFTER DELETE ON audio_records
BEGIN
    INSERT INTO record_search (record_search, rowid, title, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(OLD.owner_id, OLD.title),
           search_terms(OLD.owner_id, OLD.original_filename),
           search_terms(OLD.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id;
    DELETE FROM record_search_keys WHERE record_id = OLD.id;
END;

-- The transcript triggers replace the row: its old transcript terms (none
-- before the first transcript), then all of its terms anew.
CREATE TRIGGER texts_search_insert AFTER INSERT ON texts WHEN NEW.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.original_filename), ''
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
    INSERT INTO record_search (rowid, title, original_filename, transcript)
    SELECT k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, NEW.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
END;

CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
WHEN NEW.kind = 'transcript' AND NEW.contents IS NOT OLD.contents
BEGIN
    INSERT INTO record_search (record_search, rowid, title, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, OLD.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    INSERT INTO record_search (rowid, title, original_filename, transcript)
    SELECT k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, NEW.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
END;

CREATE TRIGGER texts_search_delete AFTER DELETE ON texts WHEN OLD.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, original_filename, transcript)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, OLD.contents)
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    INSERT INTO record_search (rowid, title, original_filename, transcript)
    SELECT k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.original_filename), ''
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
END;
