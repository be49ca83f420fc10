-- The per-person quota of queued audio (server.queued_audio_max_seconds_per_user;
-- docs/operations.md, "Hostile input").
--
-- Intake sums the duration of the owner's records still on their way (not
-- done, not halted). This partial index holds only those rows — the queue, not
-- the archive — keyed by owner and covering the duration, so the sum reads the
-- owner's queued records and nothing else. SQLite keeps it right through every
-- way a record enters or leaves the queue (intake, finish, halt, resume,
-- retranscribe, delete, the duration the normalize step measures); a counter
-- per owner would have to be kept by each of those writes, and one missed
-- would make the quota drift for good.
CREATE INDEX idx_audio_records_owner_queued ON audio_records (owner_id, duration_ms)
    WHERE halted_at IS NULL AND state <> 'done';
