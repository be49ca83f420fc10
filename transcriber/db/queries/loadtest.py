"""What `transcriber loadtest` reads back to check the pipeline's invariants."""

# One pass over the records: how many are done, halted, or still carry
# attempts or a lease (both must be gone once a record is done).
RECORD_TOTALS = """
SELECT count(*) AS records,
       coalesce(sum(CASE WHEN state = :done AND halted_at IS NULL THEN 1 ELSE 0 END), 0) AS done,
       coalesce(sum(CASE WHEN halted_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS halted,
       coalesce(sum(CASE WHEN attempts <> 0 THEN 1 ELSE 0 END), 0) AS attempts_left,
       coalesce(sum(CASE WHEN acquisition_id IS NOT NULL OR acquire_expires_at IS NOT NULL
                        THEN 1 ELSE 0 END), 0)
           AS leases_left
FROM audio_records
"""

RECORD_IDS = """
SELECT id FROM audio_records
"""

# The whole journal in the order it was written (ids are monotonic ULIDs).
JOURNAL = """
SELECT record_id, origin, step, outcome FROM record_events ORDER BY record_id, created_at, id
"""
