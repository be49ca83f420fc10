-- The model that made a record's transcript (issue 45, docs/recognition.md "Models
-- from a folder"): the bundled `whisper-base` or a folder's name from
-- `recognizer.models_dir`, as the recognizer's answers say; several, joined by
-- ", ", when parts went to different models. NULL: recognized before it was kept.
ALTER TABLE audio_records ADD COLUMN model TEXT COLLATE "C";
