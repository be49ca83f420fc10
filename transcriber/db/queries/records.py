SELECT_FILE = """
SELECT id, owner_id, record_id, file_name, size_bytes, format, duration_ms, created_at
FROM files WHERE id = :id
"""

INSERT_RECORD = """
INSERT INTO audio_records (
    id, owner_id, title, original_filename, duration_ms, size_bytes, source,
    tg_chat_id, tg_message_id, state, state_entered_at, attempts,
    original_file_id, created_at, updated_at
) VALUES (
    :id, :owner_id, :title, :original_filename, :duration_ms, :size_bytes, :source,
    :tg_chat_id, :tg_message_id, :state, :now, 0,
    :original_file_id, :now, :now
)
"""

# A title given with the recording (a Telegram caption, the audio's own title) is the
# sender's: origin 'human', which the describer never overwrites.
TITLE_GIVEN = """
UPDATE audio_records SET title_origin = 'human' WHERE id = :id
"""

# How many speakers the uploader said the recording has (NULL: find out).
SET_SPEAKERS = """
UPDATE audio_records SET speakers = :speakers WHERE id = :id
"""

# How an `http` record came in (migration 0023; NULL before it).
SET_VIA = """
UPDATE audio_records SET via = :via WHERE id = :id
"""

# The spoken language asked for at intake (the column's default is 'auto').
SET_LANGUAGE = """
UPDATE audio_records SET language = :language WHERE id = :id
"""

SELECT_RECORD = """
SELECT id, owner_id, title, brief, original_filename, duration_ms, size_bytes, source,
       tg_chat_id, tg_message_id, state, state_entered_at, halted_at, halt_reason,
       error_text, acquisition_id, acquire_expires_at, delay_time, attempts,
       original_file_id, normalized_file_id, transcript_text_id, literary_text_id,
       structure_id, recognition_id, created_at, updated_at
FROM audio_records WHERE id = :id
"""

SELECT_RECORD_BY_TELEGRAM = """
SELECT id FROM audio_records WHERE tg_chat_id = :chat_id AND tg_message_id = :message_id
"""

COUNT_BY_STAGE = """
SELECT state, count(*) AS n FROM audio_records WHERE halted_at IS NULL GROUP BY state
"""

COUNT_BY_HALT_REASON = """
SELECT halt_reason, count(*) AS n FROM audio_records
WHERE halted_at IS NOT NULL GROUP BY halt_reason
"""

# Every stored file by its folder and name (the start-up sweep's list of files to keep).
# The stage-limit gauge: asked only for stages with a limit (work in flight,
# never `done`), each a range of idx_audio_records_acquire.
OLDEST_IN_STAGE = """
SELECT min(state_entered_at) AS oldest
FROM audio_records
WHERE state = :state AND halted_at IS NULL
"""

ALL_FILE_NAMES = """
SELECT record_id, file_name FROM files
"""

# The audio one person has queued: records not done and not halted. Reads only
# the partial index idx_audio_records_owner_queued (migration 0010): the owner's
# queued records, never the archive.
QUEUED_AUDIO_MS = """
SELECT coalesce(sum(duration_ms), 0) AS queued_ms FROM audio_records
WHERE owner_id = :owner_id AND halted_at IS NULL AND state <> 'done'
"""
