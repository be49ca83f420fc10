-- A space's vocabulary (issue 45, docs/recognition.md "Vocabulary"): the names and
-- terms the recognizer is told for every record in the space, after the record
-- owner's own and before the names of the owner's known voices; a JSON list of
-- strings, one row per space. Its members read it; its editors and admins replace it.
CREATE TABLE space_vocabularies (
    space_id   TEXT PRIMARY KEY NOT NULL REFERENCES spaces (id),
    terms      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
