"""What the API shows of a record: pure functions from rows to JSON-ready dicts.

Disk names never appear here: files are reached through their record's
routes. The halt message is the pipeline's reason text, with anything that
looks like a path or a URL blanked out on the way (defence in depth: the
steps already keep them out).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from transcriber import transcripts
from transcriber.ports import Utterance

_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_PATH_RE = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?[\\/](?:[^\s\\/]+[\\/])+[^\s\\/]*")
_MESSAGE_MAX = 500
_REDACTED = "[…]"


def safe_message(text: str | None) -> str | None:
    if text is None:
        return None
    text = _URL_RE.sub(_REDACTED, text)
    text = _PATH_RE.sub(_REDACTED, text)
    return text[:_MESSAGE_MAX]


def record_summary(row: sqlite3.Row, *,
                   progress: Mapping[str, Any] | None = None) -> dict[str, Any]:
    halt = None
    if row["halted_at"] is not None:
        halt = {"at": row["halted_at"], "reason": row["halt_reason"],
                "message": safe_message(row["error_text"])}
    return {
        "id": row["id"],
        "title": row["title"],
        "original_filename": row["original_filename"],
        "source": row["source"],
        "stage": row["state"],
        "halt": halt,
        "progress": None if progress is None else dict(progress),
        "duration_ms": row["duration_ms"],
        "size_bytes": row["size_bytes"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "brief": row["brief"],
        "topics": sorted(orjson.loads(row["topics_json"] or "[]")),
    }


def speaker_names(row: sqlite3.Row) -> dict[str, str]:
    """The names the owner gave the record's speakers (`{"S1": "Anna"}`)."""
    names = orjson.loads(row["speaker_names"] or "{}")
    return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


def _copy(size: int | None, fmt: str | None, duration_ms: int | None) -> dict[str, Any] | None:
    if size is None:
        return None
    return {"size_bytes": size, "format": fmt or "", "duration_ms": duration_ms}


def record_card(
    row: sqlite3.Row,
    *,
    timeline: Sequence[sqlite3.Row],
    transcript: str | None,
    utterances: Sequence[Utterance] | None,
    poll_after_ms: int | None,
    progress: Mapping[str, Any] | None = None,
    original_speakers: Sequence[str] = (),
) -> dict[str, Any]:
    card = record_summary(row, progress=progress)
    card["files"] = {
        "original": _copy(row["original_size_bytes"], row["original_format"],
                          row["duration_ms"]),
        "normalized": _copy(row["normalized_size_bytes"], row["normalized_format"],
                            row["normalized_duration_ms"]),
    }
    card["transcript"] = transcript
    card["utterances"] = [
        {"index": index, "start_ms": u.start_ms, "end_ms": u.end_ms, "channel": u.channel,
         "speaker": u.speaker, "text": u.text}
        for index, u in enumerate(utterances or ())
    ]
    card["speakers"] = transcripts.card_speakers(utterances or (), speaker_names(row),
                                                 also=original_speakers)
    card["revision"] = row["revision"]
    card["language"] = {"requested": row["language"], "detected": row["detected_language"]}
    card["timeline"] = [
        {"at": e["created_at"], "origin": e["origin"], "step": e["step"],
         "outcome": e["outcome"], "duration_ms": e["duration_ms"]}
        for e in timeline
    ]
    card["poll_after_ms"] = poll_after_ms
    return card
