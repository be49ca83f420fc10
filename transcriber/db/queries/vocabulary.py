"""A person's vocabulary (one row per person), and what a record's recognition is told."""

OF_OWNER = """
SELECT terms FROM vocabularies WHERE owner_id = :owner_id
"""

# The names the person gave their known voices (`voice_profiles`: one row per voice,
# by owner; the UNIQUE (owner_id, name) index answers it).
VOICE_NAMES = """
SELECT name FROM voice_profiles WHERE owner_id = :owner_id ORDER BY name
"""

# The owner whose vocabulary a record's recognition is told (`reads.vocabulary`).
RECORD_OWNER = """
SELECT owner_id FROM audio_records WHERE id = :record_id
"""

UPSERT = """
INSERT INTO vocabularies (owner_id, terms, updated_at) VALUES (:owner_id, :terms, :now)
ON CONFLICT (owner_id) DO UPDATE SET terms = excluded.terms, updated_at = excluded.updated_at
"""
