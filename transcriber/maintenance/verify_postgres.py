"""`transcriber verify` of an archive on PostgreSQL (`storage.database_url`): the
counts, every file the database names present with its size (in the bucket or the data
folder), and every record's search row fresh and equal to the terms its columns give.

What SQLite's verify adds (integrity_check, foreign_key_check) PostgreSQL enforces
itself: its constraints are never off, so a committed row cannot break them.
"""

from __future__ import annotations

from transcriber.db.engine import database_url
from transcriber.db.move import archive_counts, file_entries, search_differences
from transcriber.db.postgres.connection import PgConnection, connect
from transcriber.maintenance.bucket import open_bucket_files
from transcriber.maintenance.move_files import check_local, check_objects
from transcriber.maintenance.verify import Report
from transcriber.settings import Settings


async def verify_postgres(settings: Settings) -> Report:
    url = database_url(settings.storage)
    assert url is not None, "verify_postgres needs storage.database_url"
    raw = await connect(url)
    pg = PgConnection(raw)
    try:
        counts = (await archive_counts(pg)).as_dict()
        entries = await file_entries(pg)
        _, differences = await search_differences(pg)
    finally:
        await raw.close()
    if settings.storage.files == "s3":
        async with open_bucket_files(settings) as bucket:
            checked = check_objects(entries, await bucket.stored())
    else:
        checked = check_local(entries, settings.storage.data_dir)
    problems = dict(checked.problems)
    problems["search"] = [f"record {d.record_id}: search row {d.problem}"
                          for d in differences]
    counts["records_to_index"] = sum(d.problem == "stale" for d in differences)
    return Report(counts=counts, problems={k: v for k, v in problems.items() if v})
