"""The one statement that writes a `files` row."""

# At intake the record row does not exist yet and the owner is given; a step's
# file takes the owner of its record (one primary-key lookup).
INSERT = """
INSERT INTO files (id, owner_id, record_id, file_name, size_bytes, format, duration_ms, created_at)
VALUES (:id, COALESCE(:owner_id, (SELECT owner_id FROM audio_records WHERE id = :record_id)),
        :record_id, :file_name, :size_bytes, :format, :duration_ms, :now)
"""

# A normalized copy that kept both channels (a stereo call): one primary-key update.
SET_CHANNELS = """
UPDATE files SET channels = :channels WHERE id = :id
"""
