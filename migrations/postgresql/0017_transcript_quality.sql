-- The transcript's quality report (issue 38; docs/recognition.md, "Quality report"):
-- the verdict (good, check, poor), its reasons and the numbers it was made of, as
-- JSON (`transcriber.quality.Quality`), written with the recognizer's transcript by
-- the poll step. NULL: recognized before reports were made (no report is shown).
ALTER TABLE audio_records ADD COLUMN quality TEXT COLLATE "C";
