-- Search by word forms (issue 30): the index holds each word's Snowball stem
-- (Russian or English by the word's script, after case folding and ё -> е)
-- in the five columns of 0008, and every word's folded form in a sixth
-- column, `forms`, for prefixes typed as a word is being typed
-- (transcriber/wordforms.py, transcriber/db/search.py). The SQL functions
-- are search_stems(owner_id, text) and search_forms(owner_id, text, ...);
-- search_terms stays registered for the migrations before this one.
--
-- The terms change for every row, and an archive of 200 000 records takes
-- minutes to stem: far too long for one transaction of the writer. So the
-- table is rebuilt empty here and each search key carries `indexed`: 0 until
-- its row is in the new index. The service fills the index in batches of at
-- most a fraction of a second each, newest records first
-- (transcriber/service/search_index.py, the writer command IndexPending);
-- until a record's turn comes a search does not find it. A record written
-- meanwhile is indexed by its trigger at once, which never deletes a row that
-- was not indexed (a contentless FTS5 row can only be removed with the exact
-- values it was indexed with).

DROP TRIGGER audio_records_search_insert;
DROP TRIGGER audio_records_search_update;
DROP TRIGGER audio_records_search_delete;
DROP TRIGGER texts_search_insert;
DROP TRIGGER texts_search_update;
DROP TRIGGER texts_search_delete;
DROP TABLE record_search;

ALTER TABLE record_search_keys ADD COLUMN indexed INTEGER NOT NULL DEFAULT 0
    CHECK (indexed IN (0, 1));
-- The keys still to index, newest first: a partial index that empties as the
-- batches go (its size is the work left, never the archive).
CREATE INDEX idx_record_search_keys_pending ON record_search_keys (id) WHERE indexed = 0;

CREATE VIRTUAL TABLE record_search USING fts5 (
    title,
    brief,
    original_filename,
    transcript,
    speakers,
    forms,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER audio_records_search_insert AFTER INSERT ON audio_records
BEGIN
    INSERT INTO record_search_keys (record_id, indexed) VALUES (NEW.id, 1);
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, forms)
    VALUES (last_insert_rowid(), search_stems(NEW.owner_id, NEW.title), search_stems(NEW.owner_id, NEW.brief),
            search_stems(NEW.owner_id, NEW.original_filename), search_stems(NEW.owner_id, ''),
            search_stems(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names))),
            search_forms(NEW.owner_id, NEW.title, NEW.brief, NEW.original_filename, '',
                          (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names))));
END;

CREATE TRIGGER audio_records_search_update
AFTER UPDATE OF title, brief, original_filename, owner_id, speaker_names ON audio_records
WHEN NEW.title IS NOT OLD.title OR NEW.brief IS NOT OLD.brief
  OR NEW.original_filename IS NOT OLD.original_filename OR NEW.owner_id IS NOT OLD.owner_id
  OR NEW.speaker_names IS NOT OLD.speaker_names
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT 'delete', k.id, search_stems(OLD.owner_id, OLD.title), search_stems(OLD.owner_id, OLD.brief),
           search_stems(OLD.owner_id, OLD.original_filename), search_stems(OLD.owner_id, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), '')),
           search_stems(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names))),
           search_forms(OLD.owner_id, OLD.title, OLD.brief, OLD.original_filename, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''),
                        (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names)))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT k.id, search_stems(NEW.owner_id, NEW.title), search_stems(NEW.owner_id, NEW.brief),
           search_stems(NEW.owner_id, NEW.original_filename), search_stems(NEW.owner_id, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = NEW.id AND t.kind = 'transcript'), '')),
           search_stems(NEW.owner_id, (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names))),
           search_forms(NEW.owner_id, NEW.title, NEW.brief, NEW.original_filename, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = NEW.id AND t.kind = 'transcript'), ''),
                        (SELECT group_concat(value, ' ') FROM json_each(NEW.speaker_names)))
    FROM record_search_keys AS k WHERE k.record_id = NEW.id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = NEW.id AND indexed = 0;
END;

CREATE TRIGGER audio_records_search_delete AFTER DELETE ON audio_records
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT 'delete', k.id, search_stems(OLD.owner_id, OLD.title), search_stems(OLD.owner_id, OLD.brief),
           search_stems(OLD.owner_id, OLD.original_filename), search_stems(OLD.owner_id, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), '')),
           search_stems(OLD.owner_id, (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names))),
           search_forms(OLD.owner_id, OLD.title, OLD.brief, OLD.original_filename, coalesce((SELECT t.contents FROM texts AS t
                     WHERE t.record_id = OLD.id AND t.kind = 'transcript'), ''),
                        (SELECT group_concat(value, ' ') FROM json_each(OLD.speaker_names)))
    FROM record_search_keys AS k WHERE k.record_id = OLD.id AND k.indexed = 1;
    DELETE FROM record_search_keys WHERE record_id = OLD.id;
END;

CREATE TRIGGER texts_search_insert AFTER INSERT ON texts WHEN NEW.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT 'delete', k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, ''),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, '',
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, NEW.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, NEW.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = NEW.record_id AND indexed = 0;
END;

CREATE TRIGGER texts_search_update AFTER UPDATE OF contents ON texts
WHEN NEW.kind = 'transcript' AND NEW.contents IS NOT OLD.contents
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT 'delete', k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, OLD.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, OLD.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, NEW.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, NEW.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = NEW.record_id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = NEW.record_id AND indexed = 0;
END;

CREATE TRIGGER texts_search_delete AFTER DELETE ON texts WHEN OLD.kind = 'transcript'
BEGIN
    INSERT INTO record_search (record_search, rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT 'delete', k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, OLD.contents),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, OLD.contents,
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id AND k.indexed = 1;
    INSERT INTO record_search (rowid, title, brief, original_filename, transcript, speakers, forms)
    SELECT k.id, search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
           search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, ''),
           search_stems(r.owner_id, (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))),
           search_forms(r.owner_id, r.title, r.brief, r.original_filename, '',
                        (SELECT group_concat(value, ' ') FROM json_each(r.speaker_names)))
    FROM audio_records AS r JOIN record_search_keys AS k ON k.record_id = r.id
    WHERE r.id = OLD.record_id;
    UPDATE record_search_keys SET indexed = 1 WHERE record_id = OLD.record_id AND indexed = 0;
END;
