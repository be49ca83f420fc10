"""Known voices: the owner's voice profiles, what they were made of, each record's
speakers' prints and the suggestions made for them (migration 0016).

Every statement is scoped by a key: a profile by its id (and its owner where a
person asks), a record's voices by the record. The vectors are BLOBs that
nothing but `transcriber.domain.voices` reads.
"""

from __future__ import annotations

# --- a record's voices ------------------------------------------------------------

DELETE_RECORD_VOICES = "DELETE FROM record_voices WHERE record_id = :record_id"
DELETE_RECORD_WINDOWS = "DELETE FROM record_voice_windows WHERE record_id = :record_id"

UPSERT_RECORD_WINDOWS = """
INSERT INTO record_voice_windows (record_id, windows) VALUES (:record_id, :windows)
ON CONFLICT (record_id) DO UPDATE SET windows = excluded.windows
"""

RECORD_WINDOWS = "SELECT windows FROM record_voice_windows WHERE record_id = :record_id"

# A speaker's print; its suggestion and refusals are kept when the print is computed
# again (lines moved), and cleared by `CLEAR_SUGGESTIONS` before new ones are chosen.
UPSERT_RECORD_VOICE = """
INSERT INTO record_voices (record_id, speaker, talk_ms, centroid, exemplars)
VALUES (:record_id, :speaker, :talk_ms, :centroid, :exemplars)
ON CONFLICT (record_id, speaker) DO UPDATE
SET talk_ms = excluded.talk_ms, centroid = excluded.centroid, exemplars = excluded.exemplars
"""

DELETE_RECORD_VOICE = """
DELETE FROM record_voices WHERE record_id = :record_id AND speaker = :speaker
"""

RECORD_VOICES = """
SELECT speaker, talk_ms, centroid, exemplars, profile_id, similarity, rejected
FROM record_voices WHERE record_id = :record_id
"""

RECORD_VOICE = """
SELECT speaker, talk_ms, centroid, exemplars, profile_id, similarity, rejected
FROM record_voices WHERE record_id = :record_id AND speaker = :speaker
"""

CLEAR_SUGGESTIONS = """
UPDATE record_voices SET profile_id = NULL, similarity = NULL
WHERE record_id = :record_id AND profile_id IS NOT NULL
"""

SET_SUGGESTION = """
UPDATE record_voices SET profile_id = :profile_id, similarity = :similarity
WHERE record_id = :record_id AND speaker = :speaker
"""

SET_REJECTED = """
UPDATE record_voices SET rejected = :rejected
WHERE record_id = :record_id AND speaker = :speaker
"""

# The owner and the names given on a record, owner-scoped (another's is not found).
RECORD_NAMES = """
SELECT r.owner_id, r.speaker_names FROM audio_records AS r
WHERE r.id = :record_id AND r.owner_id = :owner_id
"""

RECORD_OWNER = "SELECT r.owner_id, r.speaker_names FROM audio_records AS r WHERE r.id = :record_id"

# The card's suggestions: the profile's current name, the owner's profiles only.
RECORD_SUGGESTIONS = """
SELECT v.speaker, v.profile_id, p.name, v.similarity
FROM record_voices AS v JOIN voice_profiles AS p ON p.id = v.profile_id
WHERE v.record_id = :record_id AND p.owner_id = :owner_id
"""

# --- profiles -----------------------------------------------------------------------

# The owner's profiles with their prints: what a record's speakers are compared with.
OWNER_PROFILE_PRINTS = """
SELECT id, name, talk_ms, centroid, exemplars FROM voice_profiles WHERE owner_id = :owner_id
"""

# The list of voices: names and counts, never a vector.
OWNER_VOICES = """
SELECT id, name, talk_ms, records, created_at, updated_at FROM voice_profiles
WHERE owner_id = :owner_id ORDER BY name
"""

OWNED_PROFILE = """
SELECT id, name, talk_ms, records, created_at, updated_at FROM voice_profiles
WHERE id = :id AND owner_id = :owner_id
"""

# DO UPDATE (not DO NOTHING) so RETURNING answers for an existing name too; a new
# profile starts with the print it is made from (recomputed at once from its sources).
UPSERT_PROFILE = """
INSERT INTO voice_profiles (id, owner_id, name, centroid, exemplars, created_at, updated_at)
VALUES (:id, :owner_id, :name, :centroid, :exemplars, :now, :now)
ON CONFLICT (owner_id, name) DO UPDATE SET updated_at = :now
RETURNING id
"""

UPDATE_PROFILE_PRINT = """
UPDATE voice_profiles
SET centroid = :centroid, exemplars = :exemplars, talk_ms = :talk_ms, records = :records,
    updated_at = :now
WHERE id = :id
"""

RENAME_PROFILE = """
UPDATE voice_profiles SET name = :name, updated_at = :now WHERE id = :id AND owner_id = :owner_id
"""

# Sources cascade; suggestions of it are set NULL; the names on records stay.
DELETE_PROFILE = "DELETE FROM voice_profiles WHERE id = :id AND owner_id = :owner_id"
# A profile left without sources (its last naming taken back).
DELETE_PROFILE_BY_ID = "DELETE FROM voice_profiles WHERE id = :id"

# --- what profiles are made of ----------------------------------------------------------

RECORD_SOURCES = """
SELECT s.profile_id, s.speaker, p.name FROM voice_profile_sources AS s
JOIN voice_profiles AS p ON p.id = s.profile_id
WHERE s.record_id = :record_id
"""

UPSERT_SOURCE = """
INSERT INTO voice_profile_sources (profile_id, record_id, speaker, talk_ms, centroid, exemplars,
                                   created_at)
VALUES (:profile_id, :record_id, :speaker, :talk_ms, :centroid, :exemplars, :now)
ON CONFLICT (profile_id, record_id, speaker) DO UPDATE
SET talk_ms = excluded.talk_ms, centroid = excluded.centroid, exemplars = excluded.exemplars,
    created_at = excluded.created_at
"""

DELETE_SOURCE = """
DELETE FROM voice_profile_sources
WHERE profile_id = :profile_id AND record_id = :record_id AND speaker = :speaker
"""

PROFILE_SOURCES = """
SELECT record_id, talk_ms, centroid, exemplars FROM voice_profile_sources
WHERE profile_id = :profile_id ORDER BY created_at DESC, record_id, speaker
"""

# All but the latest `:keep` sources of a profile (NOT IN the latest: SQLite's
# `LIMIT -1 OFFSET` has no spelling on PostgreSQL).
PRUNE_SOURCES = """
DELETE FROM voice_profile_sources
WHERE profile_id = :profile_id AND (record_id, speaker) NOT IN (
    SELECT record_id, speaker FROM voice_profile_sources WHERE profile_id = :profile_id
    ORDER BY created_at DESC, record_id, speaker LIMIT :keep)
"""

# A merge: the sources of `:from_id` join `:into_id` (one it already has from the same
# record speaker is kept as it is).
MOVE_SOURCES = """
INSERT INTO voice_profile_sources (profile_id, record_id, speaker, talk_ms, centroid, exemplars,
                                   created_at)
SELECT :into_id, record_id, speaker, talk_ms, centroid, exemplars, created_at
FROM voice_profile_sources WHERE profile_id = :from_id
ON CONFLICT (profile_id, record_id, speaker) DO NOTHING
"""

# A merge: suggestions of `:from_id` become `:into_id`'s, except on a record where
# another speaker already has `:into_id` suggested (never two speakers one profile).
# A merged profile's suggestions move to the profile it joins, except where the record
# already suggests that one, a speaker of the record taught it, or the speaker refused it.
MOVE_SUGGESTIONS = """
UPDATE record_voices SET profile_id = :into_id
WHERE profile_id = :from_id AND NOT EXISTS (
    SELECT 1 FROM record_voices AS other
    WHERE other.record_id = record_voices.record_id AND other.profile_id = :into_id)
  AND NOT EXISTS (
    SELECT 1 FROM voice_profile_sources AS s
    WHERE s.record_id = record_voices.record_id AND s.profile_id = :into_id)
  AND NOT EXISTS (SELECT 1 FROM json_each(record_voices.rejected) AS r WHERE r.value = :into_id)
"""

# --- purge ------------------------------------------------------------------------------

PURGE_PROFILES = "DELETE FROM voice_profiles"
PURGE_RECORD_VOICES = "DELETE FROM record_voices"
PURGE_RECORD_WINDOWS = "DELETE FROM record_voice_windows"

PURGE_OWNER_PROFILES = "DELETE FROM voice_profiles WHERE owner_id = :owner_id"
PURGE_OWNER_RECORD_VOICES = """
DELETE FROM record_voices
WHERE record_id IN (SELECT r.id FROM audio_records AS r WHERE r.owner_id = :owner_id)
"""
PURGE_OWNER_RECORD_WINDOWS = """
DELETE FROM record_voice_windows
WHERE record_id IN (SELECT r.id FROM audio_records AS r WHERE r.owner_id = :owner_id)
"""

USER_BY_LOGIN = "SELECT id FROM users WHERE provider_login = :login"
