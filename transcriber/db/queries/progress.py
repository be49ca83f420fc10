"""Progress of a record in recognition: its parts, the measured speed, normalization."""

SELECT_PROGRESS_RECORD = """
SELECT id, state, halted_at, duration_ms, state_entered_at, created_at
FROM audio_records WHERE id = :record_id
"""

SELECT_PROGRESS_PARTS = """
SELECT part_index, offset_ms, channel, provider, model, payload_file, started_at, finished_at
FROM recognitions WHERE record_id = :record_id ORDER BY part_index
"""

SELECT_SPEED = """
SELECT provider, model, real_time_factor, samples, updated_at
FROM recognition_speed WHERE provider = :provider AND model = :model
"""

UPSERT_SPEED = """
INSERT INTO recognition_speed (provider, model, real_time_factor, samples, updated_at)
VALUES (:provider, :model, :real_time_factor, 1, :now)
ON CONFLICT (provider, model) DO UPDATE SET
    real_time_factor = :real_time_factor, samples = recognition_speed.samples + 1, updated_at = :now
"""

# The recognition work queued ahead of a record: the records before it in claim order
# (P2: created_at, then id) still on their way to a transcript, each counted by the
# share of its parts without a saved answer (all of it before its parts exist).
# It reads the queue's own index (idx_audio_records_queue_order, migration 0018) in
# claim order, never the archive's done records, and at most :limit of them: the first
# ones the workers will take (beyond them, the sum is a lower bound).
SELECT_QUEUE_AHEAD = """
SELECT count(*) AS records, COALESCE(sum(left_ms), 0) AS audio_ms FROM (
    SELECT a.duration_ms * (
        SELECT CASE WHEN count(*) = 0 THEN 1.0
                    ELSE (count(*) - count(r.payload_file)) * 1.0 / count(*) END
        FROM recognitions AS r WHERE r.record_id = a.id
    ) AS left_ms
    FROM audio_records AS a INDEXED BY idx_audio_records_queue_order
    WHERE a.state IN ('uploaded', 'normalized', 'submitted') AND a.halted_at IS NULL
      AND (a.created_at < :created_at OR (a.created_at = :created_at AND a.id < :record_id))
    ORDER BY a.created_at, a.id
    LIMIT :limit
) AS ahead
"""

SELECT_NORMALIZE_PROGRESS = """
SELECT record_id, done_ms, total_ms, started_at, updated_at
FROM normalize_progress WHERE record_id = :record_id
"""

# Only the record's holder reports; a report never moves `done_ms` back.
UPSERT_NORMALIZE_PROGRESS = """
INSERT INTO normalize_progress (record_id, done_ms, total_ms, started_at, updated_at)
SELECT :record_id, :done_ms, :total_ms, :now, :now
WHERE EXISTS (SELECT 1 FROM audio_records WHERE id = :record_id AND acquisition_id = :token)
ON CONFLICT (record_id) DO UPDATE SET
    done_ms = CASE WHEN normalize_progress.done_ms > excluded.done_ms
                   THEN normalize_progress.done_ms ELSE excluded.done_ms END,
    total_ms = excluded.total_ms,
    updated_at = excluded.updated_at
"""
