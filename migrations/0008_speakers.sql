-- Speakers (issue 13): the owner's names for a record's speakers, the number
-- of speakers the uploader gave, and the names in the search index.

-- {"S1": "Anna", "S2": "Boris"}: only labels the transcript has, each name
-- at most 64 characters (checked by the web layer before the writer runs).
ALTER TABLE audio_records ADD COLUMN speaker_names TEXT NOT NULL DEFAULT '{}';
-- How many speakers the uploader said the recording has (1-8), NULL: find out.
ALTER TABLE audio_records ADD COLUMN speakers INTEGER CHECK (speakers BETWEEN 1 AND 8);

-- The names join the search index as a fifth FTS5 column: the table is
-- rebuilt (contentless, keyed by record_search_keys as in 0003) with every
-- trigger that writes it. The indexed text is the names only (the JSON's
-- values, never its labels), recomputed from the row as 0003 explains.
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
    speakers,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers)
SELECT k.id,
       search_terms(r.owner_id, r.title),
       search_terms(r.owner_id, r.brief),
       search_terms(r.owner_id, r.original_filename),
       search_terms(r.owner_id, coalesce(t.contents, '')),
       search_terms(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
FROM record_search_keys AS k
JOIN audio_records AS r ON r.id = k.record_id
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript';

CREATE TRIGGER audio_records_search_insert AFTER INSERT ON audio_records
BEGIN
    INSERT INTO record_search_keys (record_id) VALUES (NEW.id);
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers)
    VALUES (last_insert_rowid(), search_terms(NEW.owner_id, NEW.title),
            search_terms(NEW.owner_id, NEW.brief),
            search_terms(NEW.owner_id, NEW.original_filename), '',
            search_terms(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names))));
END;

CREATE TRIGGER audio_records_search_update
AFTER UPDATE OF title, brief, original_filename, owner_id, speaker_names ON audio_records
WHEN NEW.title IS NOT OLD.title OR NEW.brief IS NOT OLD.brief
  OR NEW.original_filename IS NOT OLD.original_filename OR NEW.owner_id IS NOT OLD.owner_id
  OR NEW.speaker_names IS NOT OLD.speaker_names
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers)
    SELECT 'delete', k.id, search_terms(OLD.owner_id, OLD.title),
           search_terms(OLD.owner_id, OLD.brief),
           search_terms(OLD.owner_id, OLD.original_filename),
           search_terms(OLD.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = OLD.id AND t.kind = 'transcript'), '')),
           search_terms(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names)))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers)
    SELECT k.id, search_terms(NEW.owner_id, NEW.title),
           search_terms(NEW.owner_id, NEW.brief),
           search_terms(NEW.owner_id, NEW.original_filename),
           search_terms(NEW.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = NEW.id AND t.kind = 'transcript'), '')),
           search_terms(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names)))
    FROM record_search_keys AS k WHERE k.record_id = NEW.id;
END;

CREATE TRIGGER audio_records_search_delete AFTER DELETE ON audio_records
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers)
    SELECT 'delete', k.id, search_terms(OLD.owner_id, OLD.title),
           search_terms(OLD.owner_id, OLD.brief),
           search_terms(OLD.owner_id, OLD.original_filename),
           search_terms(OLD.owner_id, coalesce(
               (SELECT t.contents FROM texts AS t
                WHERE t.record_id = OLD.id AND t.kind = 'transcript'), '')),
           search_terms(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names)))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id;
    DELETE FROM record_search_keys WHERE record_id = OLD.id;
END;

CREATE TRIGGER texts_search_insert AFTER INSERT ON texts WHEN NEW.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), '',
           search_terms(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers)
    SELECT k.id, search_terms(r.owner_id, r.title), search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, NEW.contents),
           search_terms(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
END;

CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
WHEN NEW.kind = 'transcript' AND NEW.contents IS NOT OLD.contents
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, OLD.contents),
           search_terms(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers)
    SELECT k.id, search_terms(r.owner_id, r.title), search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, NEW.contents),
           search_terms(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
END;

CREATE TRIGGER texts_search_delete AFTER DELETE ON texts WHEN OLD.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers)
    SELECT 'delete', k.id, search_terms(r.owner_id, r.title),
           search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), search_terms(r.owner_id, OLD.contents),
           search_terms(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers)
    SELECT k.id, search_terms(r.owner_id, r.title), search_terms(r.owner_id, r.brief),
           search_terms(r.owner_id, r.original_filename), '',
           search_terms(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
END;
