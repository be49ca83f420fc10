"""A record's transcript: its plain text and its timed utterances.

The utterances are the owner's latest correction when there is one, else
the recognizer's own structure (`transcripts.STRUCTURE_ROW`); a stored
structure that cannot be read raises `transcripts.BadStructure`, and each
caller decides what that means for its answer.
"""

from __future__ import annotations

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain import transcripts
from transcriber.ports import Utterance


async def transcript_text(readers: ReaderPool, *, record_id: str) -> str | None:
    row = await readers.fetch_one(q.archive.TRANSCRIPT_TEXT, {"record_id": record_id})
    return None if row is None else str(row["contents"])


async def current_structure(readers: ReaderPool, *, record_id: str) -> str | bytes | None:
    """The stored JSON of the owner's latest correction, else of the recognizer's
    structure; None before the record has a transcript (parsed by whoever reads it:
    the search's matching parses it in a worker process)."""
    corrected = await readers.fetch_one(q.archive.CORRECTED_STRUCTURE, {"record_id": record_id})
    if corrected is not None:
        contents: str | bytes = corrected["contents"]
        return contents
    row = await readers.fetch_one(
        q.archive.STRUCTURE, {"record_id": record_id, "version": transcripts.STRUCTURE_ROW})
    return None if row is None else row["contents"]


async def utterances(readers: ReaderPool, *, record_id: str,
                     original: bool = False) -> list[Utterance] | None:
    """The owner's latest correction, else (or with `original`) the recognizer's own;
    None before the record has a transcript."""
    if not original:
        corrected = await readers.fetch_one(q.archive.CORRECTED_STRUCTURE,
                                            {"record_id": record_id})
        if corrected is not None:
            return transcripts.load_structure(corrected["contents"])
    row = await readers.fetch_one(
        q.archive.STRUCTURE, {"record_id": record_id, "version": transcripts.STRUCTURE_ROW})
    return None if row is None else transcripts.load_structure(row["contents"])
