"""Counts over the archive for the gauges and `transcriber status`, and the
start-up sweep's list of stored files (each named in the query-plan test's
exceptions, with its reason)."""

from __future__ import annotations

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool


async def ready(readers: ReaderPool) -> None:
    """A trivial read: raises when the readers cannot read."""
    await readers.fetch_one(q.control.READY_PROBE)


async def by_stage(readers: ReaderPool) -> dict[str, int]:
    """Records not halted, by stage (a stage without records is absent)."""
    rows = await readers.fetch_all(q.records.COUNT_BY_STAGE)
    return {str(row["state"]): int(row["n"]) for row in rows}


async def by_halt_reason(readers: ReaderPool) -> dict[str, int]:
    """Halted records, by reason (a reason without records is absent)."""
    rows = await readers.fetch_all(q.records.COUNT_BY_HALT_REASON)
    return {str(row["halt_reason"]): int(row["n"]) for row in rows}


async def oldest_in_stage(readers: ReaderPool, *, state: str) -> str | None:
    """When the record longest in `state` (not halted) entered it; None: none is."""
    row = await readers.fetch_one(q.records.OLDEST_IN_STAGE, {"state": state})
    return None if row is None or row["oldest"] is None else str(row["oldest"])


async def stored_file_names(readers: ReaderPool) -> set[tuple[str, str]]:
    """Every stored file as (record id, file name): the files the sweep keeps."""
    rows = await readers.fetch_all(q.records.ALL_FILE_NAMES)
    return {(str(row["record_id"]), str(row["file_name"])) for row in rows}

