"""A person's vocabulary (one row per person), a space's (one row per space), and what
a record's recognition is told."""

OF_OWNER = """
SELECT terms FROM vocabularies WHERE owner_id = :owner_id
"""

# The names the person gave their known voices (`voice_profiles`: one row per voice,
# by owner; the UNIQUE (owner_id, name) index answers it).
VOICE_NAMES = """
SELECT name FROM voice_profiles WHERE owner_id = :owner_id ORDER BY name
"""

# The owner and the space whose vocabularies a record's recognition is told
# (`reads.vocabulary`); one row by the primary key.
RECORD_OWNER = """
SELECT owner_id, space_id FROM audio_records WHERE id = :record_id
"""

OF_SPACE = """
SELECT terms FROM space_vocabularies WHERE space_id = :space_id
"""

UPSERT = """
INSERT INTO vocabularies (owner_id, terms, updated_at) VALUES (:owner_id, :terms, :now)
ON CONFLICT (owner_id) DO UPDATE SET terms = excluded.terms, updated_at = excluded.updated_at
"""

UPSERT_SPACE = """
INSERT INTO space_vocabularies (space_id, terms, updated_at) VALUES (:space_id, :terms, :now)
ON CONFLICT (space_id) DO UPDATE SET terms = excluded.terms, updated_at = excluded.updated_at
"""
