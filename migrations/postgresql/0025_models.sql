-- The model that made a record's transcript (issue 45, docs/recognition.md "Models
-- from a folder"): the bundled `whisper-base` or a folder's name from
-- `recognizer.models_dir`, as the recognizer's answers say; several, joined by
-- ", ", when parts went to different models. NULL: recognized before it was kept.
ALTER TABLE audio_records ADD COLUMN model TEXT COLLATE "C";
-- The model a person asked a re-transcription to use (a name `transcriber models list`
-- shows, or the bundled model's); NULL: chosen by `recognizer.routes`.
ALTER TABLE audio_records ADD COLUMN model_wanted TEXT COLLATE "C";

-- A person's vocabulary (docs/recognition.md, "Vocabulary"): the names and terms
-- the recognizer is told, a JSON list of strings, one row per person.
CREATE TABLE vocabularies (
    owner_id   TEXT COLLATE "C" PRIMARY KEY NOT NULL REFERENCES users (id),
    terms      TEXT NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);
