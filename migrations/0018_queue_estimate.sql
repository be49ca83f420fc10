-- The queue in claim order, for the estimate of a queued record (docs/pipeline.md,
-- "Progress and ETA"): the recognition work ahead of a record is the records
-- before it (created_at, id) still on their way to a transcript. This partial
-- index holds only those rows — the queue, not the archive — so the sum reads
-- the queue ahead and nothing else, whatever the size of the archive; the
-- duration rides along so the rows need not be visited for it.
CREATE INDEX idx_audio_records_queue_order ON audio_records (created_at, id, duration_ms)
    WHERE halted_at IS NULL AND state IN ('uploaded', 'normalized', 'submitted');
