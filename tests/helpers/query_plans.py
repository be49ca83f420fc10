"""What the query-plan tests of both engines share: the tables that grow with the
archive, the statements that may read one whole (each with its reason), and the walk
over every named statement of `transcriber.db.queries`."""

from __future__ import annotations

import re
from collections.abc import Iterator

from transcriber.db import queries as q
from transcriber.domain.stages import STAGES

GROWING = ("audio_records", "texts", "structures", "files", "recognitions", "record_events",
           "record_search", "record_search_keys", "telegram_outbox", "telegram_status",
           "topics", "record_topics", "structure_revisions", "describe_jobs",
           "record_search_terms", "webhooks", "webhook_deliveries", "voice_profiles",
           "voice_profile_sources", "record_voices", "record_voice_windows", "record_links",
           "ask_conversations", "ask_turns")

# name -> why a whole-table read is right there.
EXCEPTIONS: dict[str, str] = {
    "records.ALL_FILE_NAMES":
        "the start-up sweep's list of files to keep: it must know every stored file; "
        "it runs once per start on a reader, before the pipeline, never in the writer",
    "records.COUNT_BY_STAGE":
        "the records-by-stage gauge counts the whole archive by definition; a covering-index "
        "scan on a reader connection (metrics, status), never in the writer's transaction",
    "records.COUNT_BY_HALT_REASON":
        "scans only the partial index idx_audio_records_halted: halted records, not the archive",
    "telegram.OUTBOX_DEPTH":
        "scans only a partial index of the pending outbox rows (the queue, not the archive); "
        "on a reader, for the depth gauge",
    "telegram.LIVE_STATUSES":
        "scans only the partial index idx_status_live: status messages of records still on "
        "their way (not the archive), each record then found by its key",
    "telegram.DUE_CHATS":
        "scans only a partial index of the pending outbox rows (the queue, not the archive); "
        "on a reader, once per delivery round",
    "describe.PENDING_COUNT":
        "scans only the partial index idx_describe_jobs_due (the queue, not the archive); on "
        "a reader, for the queue's gauge",
    "webhooks.QUEUE_DEPTH":
        "scans only the partial index idx_webhook_deliveries_due of the pending deliveries "
        "(the queue, not the archive); on a reader, for the depth gauge, once per round",
    "search.PENDING_TERMS":
        "scans only the partial index idx_record_search_keys_pending (records still waiting "
        "for the word forms after migration 0012: it empties as the batches go), LIMIT a batch",
    "search.PENDING_COUNT":
        "scans only the partial index idx_record_search_keys_pending (the work left, not the "
        "archive); on a reader, once at start and by verify",
    "maintenance.SNAPSHOT_FILES":
        "backup and verify list every stored file, on their own snapshot or copy, never in "
        "the writer",
    "maintenance.COUNTS":
        "the backup manifest's and verify's totals over the whole copy, once per run",
    "maintenance.RECORDS_WITHOUT_SEARCH_KEY":
        "verify reads every record of a folder nobody writes, once per run",
    "maintenance.SEARCH_KEYS_WITHOUT_RECORD":
        "verify reads every search key of a folder nobody writes, once per run",
    "maintenance.FILL_EXPECTED_INDEX":
        "verify rebuilds the whole search index into a temporary table to compare, once per run",
    "voices.PURGE_PROFILES":
        "`transcriber voices purge` without a login deletes every voice profile by "
        "definition; a command a person runs, never the service",
    "voices.PURGE_RECORD_VOICES":
        "`transcriber voices purge` without a login deletes every record's prints by "
        "definition; a command a person runs, never the service",
    "voices.PURGE_RECORD_WINDOWS":
        "`transcriber voices purge` without a login deletes every record's windows by "
        "definition; a command a person runs, never the service",
    "loadtest.RECORD_TOTALS":
        "the load test's final check of its own throw-away archive, once after the run",
    "loadtest.RECORD_IDS":
        "the load test's final check of its own throw-away archive, once after the run",
    "loadtest.JOURNAL":
        "the load test's final check of its own throw-away archive, once after the run",
}

# Pragmas, transaction control and DDL read no table (and EXPLAIN would run a pragma).
_DML_RE = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", re.I)


def named_statements() -> Iterator[tuple[str, str]]:
    for module_name in q.__all__:
        module = getattr(q, module_name)
        for name, value in vars(module).items():
            if (name.isupper() and isinstance(value, str) and not name.startswith("_")
                    and _DML_RE.match(value)):
                yield f"{module_name}.{name}", value
    for spec in STAGES:
        if spec.owned_columns:
            yield (f"results.update_record_columns[{spec.stage.value}]",
                   q.results.update_record_columns(spec.owned_columns))


