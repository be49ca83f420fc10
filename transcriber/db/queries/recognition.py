"""Recognition operations: one row per part, written before the paid call (P13)."""

HOLDS_CLAIM = """
SELECT 1 AS held FROM audio_records WHERE id = :record_id AND acquisition_id = :token
"""

INSERT_RECOGNITION = """
INSERT INTO recognitions (
    id, record_id, part_index, offset_ms, channel, provider, model, source_uri, created_at,
    updated_at
) VALUES (
    :id, :record_id, :part_index, :offset_ms, :channel, :provider, :model, :source_uri, :now,
    :now
)
ON CONFLICT (record_id, part_index) DO NOTHING
"""

SELECT_RECOGNITION_PART = """
SELECT id, record_id, part_index, offset_ms, channel, provider, model, external_id, source_uri,
       payload_file, started_at, finished_at, created_at, updated_at
FROM recognitions WHERE record_id = :record_id AND part_index = :part_index
"""

SELECT_RECOGNITIONS = """
SELECT id, record_id, part_index, offset_ms, channel, provider, model, external_id, source_uri,
       payload_file, started_at, finished_at, created_at, updated_at
FROM recognitions WHERE record_id = :record_id ORDER BY part_index
"""

# A local part's `started_at` was written when its recognition began (`MARK_PART_STARTED`):
# kept, so its progress and measured speed start there, not at its end.
SET_EXTERNAL_ID = """
UPDATE recognitions SET external_id = :external_id, started_at = COALESCE(started_at, :now),
    updated_at = :now
WHERE id = :id AND external_id IS NULL
  AND EXISTS (SELECT 1 FROM audio_records WHERE id = :record_id AND acquisition_id = :token)
"""

# A part whose operation failed retryably was submitted again: the new id replaces the old.
REPLACE_EXTERNAL_ID = """
UPDATE recognitions SET external_id = :external_id, started_at = :now, updated_at = :now
WHERE id = :id AND payload_file IS NULL
  AND EXISTS (SELECT 1 FROM audio_records WHERE id = :record_id AND acquisition_id = :token)
"""

# A part a local recognizer starts on now (each try anew): the progress of the part
# running moves from this moment (docs/pipeline.md, "Progress and ETA").
MARK_PART_STARTED = """
UPDATE recognitions SET started_at = :now, updated_at = :now
WHERE id = :id AND payload_file IS NULL
  AND EXISTS (SELECT 1 FROM audio_records WHERE id = :record_id AND acquisition_id = :token)
"""

SET_PAYLOAD_FILE = """
UPDATE recognitions SET payload_file = :payload_file, finished_at = :now, updated_at = :now
WHERE id = :id AND payload_file IS NULL
  AND EXISTS (SELECT 1 FROM audio_records WHERE id = :record_id AND acquisition_id = :token)
"""

COUNT_RECOGNITIONS = """
SELECT count(*) AS n FROM recognitions WHERE record_id = :record_id
"""
