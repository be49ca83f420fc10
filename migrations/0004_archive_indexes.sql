-- Indexes so that no statement of the service reads the whole archive
-- (tests/integration/storage/test_query_plans.py checks every named statement).

-- audio_records.original_file_id and normalized_file_id reference files: an
-- INSERT ... SELECT into files (a step's result file) makes SQLite look for
-- records that reference the new row, and a deleted files row would too.
-- Without these indexes that lookup is a scan of audio_records.
CREATE INDEX idx_audio_records_original_file ON audio_records (original_file_id)
    WHERE original_file_id IS NOT NULL;
CREATE INDEX idx_audio_records_normalized_file ON audio_records (normalized_file_id)
    WHERE normalized_file_id IS NOT NULL;

-- The halted records by reason (the metrics and status counts) read only the
-- halted records, not every record the archive ever kept.
CREATE INDEX idx_audio_records_halted ON audio_records (halt_reason)
    WHERE halted_at IS NOT NULL;
