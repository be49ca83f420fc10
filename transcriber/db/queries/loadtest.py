"""What `transcriber loadtest` reads back to check the pipeline's invariants."""

# One pass over the records: how many are done, halted, or still carry
# attempts or a lease (both must be gone once a record is done).
RECORD_TOTALS = """
SELECT count(*) AS records,
       coalesce(sum(state = :done AND halted_at IS NULL), 0) AS done,
       coalesce(sum(halted_at IS NOT NULL), 0) AS halted,
       coalesce(sum(attempts <> 0), 0) AS attempts_left,
       coalesce(sum(acquisition_id IS NOT NULL OR acquire_expires_at IS NOT NULL), 0)
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
