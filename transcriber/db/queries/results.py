"""Step results written inside an advance: files rows, texts, structures, own columns."""

from __future__ import annotations

from collections.abc import Sequence

from transcriber.domain.stages import STAGES

UPSERT_TEXT = """
INSERT INTO texts (id, record_id, kind, contents, created_at, updated_at)
VALUES (:id, :record_id, :kind, :contents, :now, :now)
ON CONFLICT (record_id, kind) DO UPDATE
SET contents = excluded.contents, updated_at = excluded.updated_at
RETURNING id
"""

UPSERT_STRUCTURE = """
INSERT INTO structures (id, record_id, version, contents, created_at, updated_at)
VALUES (:id, :record_id, :version, :contents, :now, :now)
ON CONFLICT (record_id, version) DO UPDATE
SET contents = excluded.contents, updated_at = excluded.updated_at
RETURNING id
"""

SELECT_TEXT = """
SELECT id, record_id, kind, contents, created_at, updated_at
FROM texts WHERE record_id = :record_id AND kind = :kind
"""

SELECT_STRUCTURE = """
SELECT id, record_id, version, contents, created_at, updated_at
FROM structures WHERE record_id = :record_id AND version = :version
"""

# Every column some step may own; the UPDATE text is built only from these.
OWNABLE_COLUMNS: frozenset[str] = frozenset(
    column for spec in STAGES for column in spec.owned_columns
)


def update_record_columns(columns: Sequence[str]) -> str:
    """`UPDATE audio_records SET <col> = :<col>, ...` for step-owned columns only."""
    if not columns:
        raise ValueError("no columns to set")
    unknown = set(columns) - OWNABLE_COLUMNS
    if unknown:
        raise ValueError(f"columns no step owns: {sorted(unknown)}")
    assignments = ", ".join(f"{column} = :{column}" for column in columns)
    return f"UPDATE audio_records SET {assignments}, updated_at = :now WHERE id = :record_id"

# What a step reads about its claimed record (through the reader pool).
SELECT_STEP_RECORD = """
SELECT r.id, r.owner_id, r.state, r.duration_ms, r.source, r.tg_chat_id, r.tg_message_id,
       r.original_file_id, r.normalized_file_id, r.transcript_text_id, r.structure_id,
       r.recognition_id, r.acquisition_id, r.language, r.speakers, r.model_wanted,
       o.file_name AS original_file_name, n.file_name AS normalized_file_name,
       n.duration_ms AS normalized_duration_ms, coalesce(n.channels, 1) AS normalized_channels
FROM audio_records AS r
LEFT JOIN files AS o ON o.id = r.original_file_id
LEFT JOIN files AS n ON n.id = r.normalized_file_id
WHERE r.id = :record_id
"""
