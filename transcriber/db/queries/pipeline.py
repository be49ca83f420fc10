"""The pipeline's queue statements.

The claimable set and the per-stage lease expression of `CLAIM` are generated
from the stage descriptor (P8), so a new stage cannot be forgotten here. Every
result write is conditional on `acquisition_id = :token` (P3) and writes only
the queue's bookkeeping columns: never owner, title, brief or topics.
"""

from __future__ import annotations

from transcriber.domain.stages import claimable_stages


def lease_param(stage: str) -> str:
    """The named parameter holding the lease expiry of records in `stage`."""
    return f"lease_until_{stage}"


CLAIMABLE_STAGES: tuple[str, ...] = tuple(stage.value for stage in claimable_stages())

IN_CLAIMABLE = ", ".join(f"'{stage}'" for stage in CLAIMABLE_STAGES)
LEASE_BY_STAGE = "CASE state " + " ".join(
    f"WHEN '{stage}' THEN :{lease_param(stage)}" for stage in CLAIMABLE_STAGES
) + " END"

# One statement picks the oldest eligible record and marks it (P2). INDEXED BY:
# the planner, seeing many eligible rows, may otherwise prefer a full scan;
# the claim is the hottest query and must stay on its index (a test checks). Column
# references on the right of SET read the row's old values, so
# `lease_taken_over` tells whether the previous holder's lease had expired
# (released records have no acquisition id).
CLAIM = f"""
UPDATE audio_records
SET acquisition_id = :token,
    acquire_expires_at = {LEASE_BY_STAGE},
    attempts = attempts + 1,
    lease_taken_over = (acquisition_id IS NOT NULL)
WHERE id = (
    SELECT id FROM audio_records INDEXED BY idx_audio_records_acquire
    WHERE state IN ({IN_CLAIMABLE})
      AND halted_at IS NULL
      AND (delay_time IS NULL OR delay_time <= :now)
      AND (acquire_expires_at IS NULL OR acquire_expires_at <= :now)
    ORDER BY created_at, id
    LIMIT 1
)
RETURNING id, acquisition_id
"""

# The queue bookkeeping of the record just claimed, read in the same command.
SELECT_CLAIMED = """
SELECT state, attempts, state_entered_at, lease_taken_over, acquire_expires_at
FROM audio_records WHERE id = :id AND acquisition_id = :token
"""

RENEW_LEASE = """
UPDATE audio_records SET acquire_expires_at = :until
WHERE id = :id AND acquisition_id = :token AND halted_at IS NULL
"""

ADVANCE = """
UPDATE audio_records
SET state = :next_stage,
    state_entered_at = :now,
    attempts = 0,
    delay_time = NULL,
    error_text = NULL,
    acquisition_id = NULL,
    acquire_expires_at = NULL,
    updated_at = :now
WHERE id = :id AND acquisition_id = :token AND state = :stage AND halted_at IS NULL
"""

DEFER = """
UPDATE audio_records
SET delay_time = :until, attempts = 0, acquisition_id = NULL, acquire_expires_at = NULL
WHERE id = :id AND acquisition_id = :token AND halted_at IS NULL
"""

FAIL = """
UPDATE audio_records
SET delay_time = :until, error_text = :error_text,
    acquisition_id = NULL, acquire_expires_at = NULL
WHERE id = :id AND acquisition_id = :token AND halted_at IS NULL
"""

HALT = """
UPDATE audio_records
SET halted_at = :now, halt_reason = :reason, error_text = :error_text,
    acquisition_id = NULL, acquire_expires_at = NULL, updated_at = :now
WHERE id = :id AND acquisition_id = :token AND halted_at IS NULL
RETURNING state
"""

RELEASE_ON_SHUTDOWN = """
UPDATE audio_records
SET attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END,
    acquisition_id = NULL, acquire_expires_at = NULL
WHERE id = :id AND acquisition_id = :token
"""

SELECT_FOR_RESUME = """
SELECT owner_id, state, halted_at FROM audio_records WHERE id = :id
"""

RESUME = """
UPDATE audio_records
SET halted_at = NULL, halt_reason = NULL, error_text = NULL,
    attempts = 0, delay_time = NULL, state_entered_at = :now,
    acquisition_id = NULL, acquire_expires_at = NULL, updated_at = :now
WHERE id = :id AND halted_at IS NOT NULL
"""

INSERT_EVENT = """
INSERT INTO record_events (id, record_id, origin, step, outcome, outcome_text, duration_ms,
                           created_at, actor_id)
VALUES (:id, :record_id, :origin, :step, :outcome, :outcome_text, :duration_ms, :now,
        :actor_id)
"""

SELECT_EVENTS = """
SELECT id, record_id, origin, step, outcome, outcome_text, duration_ms, created_at
FROM record_events WHERE record_id = :record_id ORDER BY created_at, id
"""

SELECT_REPLY_ADDRESS = """
SELECT id, source, tg_chat_id, tg_message_id FROM audio_records WHERE id = :id
"""

SELECT_QUEUE_STATE = """
SELECT id, owner_id, state, state_entered_at, halted_at, halt_reason, error_text,
       acquisition_id, acquire_expires_at, delay_time, attempts, lease_taken_over, updated_at
FROM audio_records WHERE id = :id
"""
