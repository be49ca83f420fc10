"""Metrics and logging set-up.

Metrics live in the process-wide Prometheus registry. Logs are structlog
events named by action (`claim_step`, `step_failed`); they carry ids, stages
and reasons, never transcript text, sender messages, file names or URLs.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog
from aiohttp.http_exceptions import HttpProcessingError
from prometheus_client import Counter, Gauge, Histogram

_FAST_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
_STEP_BUCKETS = (0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14400)

WRITER_MAILBOX_DEPTH = Gauge(
    "transcriber_writer_mailbox_depth", "Commands waiting in the DB writer's mailbox"
)
WRITER_COMMAND_SECONDS = Histogram(
    "transcriber_writer_command_seconds",
    "Time from enqueueing a writer command to its answer (queue wait + run)",
    ["command"],
    buckets=_FAST_BUCKETS,
)
WRITER_COMMANDS = Counter(
    "transcriber_writer_commands_total", "Writer commands by kind and outcome",
    ["command", "outcome"],
)
WRITER_BATCH_SIZE = Histogram(
    "transcriber_writer_batch_size", "Commands committed in one writer transaction",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
WAL_SCRUBS = Counter(
    "transcriber_db_wal_scrubs_total",
    "WAL checkpoints (TRUNCATE) after a deletion that must leave the disk; busy: a "
    "reader kept it short, tried again after the next batch",
    ["outcome"],
)
ASK_ANSWERS = Counter(
    "transcriber_ask_answers_total",
    "Questions answered, by how: offline (the passages), model, model_failed (the model "
    "could not answer: the passages instead)",
    ["how"],
)
ASK_CITATIONS_DROPPED = Counter(
    "transcriber_ask_citations_dropped_total",
    "Citations of a model's answer dropped after generation: a [n] that is not a passage "
    "sent, or a quotation that is not in the cited transcript",
)
VOICE_SUGGESTIONS = Counter(
    "transcriber_voice_suggestions_total",
    "Known-voice suggestions made, and matchings refused for giving one profile two "
    "speakers (an invariant; never expected)", ["outcome"],
)
SPEAKER_TURNS_REFOUND = Counter(
    "transcriber_speaker_turns_refound_total",
    "Speaker turns found beside a recognition over other speech regions than its saved "
    "answer keeps (the job's own VAD), found again over the answer's: the same audio "
    "gives the same speakers", ["reason"],
)
WATCH_FILES = Counter(
    "transcriber_watch_files_total",
    "Files of the watched folders by outcome: taken (a record), seen (taken before, moved "
    "on without a second record), failed (refused, moved to failed/), changed (still "
    "written while read), retried (a passing failure); space_refused counts looks that left "
    "the files waiting because watch.space is missing or not the owner's to fill", ["outcome"],
)
WORKER_RUNS = Counter(
    "transcriber_worker_runs_total", "Step runs by the stage claimed from and outcome",
    ["stage", "outcome"],
)
CLAIM_SECONDS = Histogram(
    "transcriber_claim_seconds", "Latency of a claim through the writer", buckets=_FAST_BUCKETS
)
STEP_SECONDS = Histogram(
    "transcriber_step_seconds", "Duration of a step by stage", ["stage"], buckets=_STEP_BUCKETS
)
RECORDS_BY_STAGE = Gauge(
    "transcriber_records", "Records not halted, by stage (read on scrape)", ["stage"]
)
RECORDS_HALTED = Gauge(
    "transcriber_records_halted", "Halted records by reason (read on scrape)", ["reason"]
)
SEARCH_RECORDS_TO_INDEX = Gauge(
    "transcriber_search_records_to_index",
    "Records the search index has yet to take under its terms (after migrations 0012 and 0015)",
)
SEARCH_REFRESH_FAILURES = Counter(
    "transcriber_search_refresh_failures_total",
    "PostgreSQL writer batches whose search refresh failed and ran again command by command",
)
SEARCH_MATCHING = Counter(
    "transcriber_search_matching_total",
    "Transcript matchings (find in transcript, list matches) by outcome: complete, or "
    "partial (the time budget ran out)",
    ["outcome"],
)
OUTBOX_DEPTH = Gauge(
    "transcriber_outbox_depth", "Telegram replies and halt notices waiting in the outbox"
)
DESCRIPTIONS = Counter(
    "transcriber_descriptions_total",
    "Description jobs by outcome: `described` (by the provider), `fallback` (the extractive "
    "description after the provider failed), `retry`, `failed`, `skipped` (the record left "
    "`done`, or every field is a person's)",
    ["provider", "outcome"],
)
DESCRIBE_SECONDS = Histogram(
    "transcriber_describe_seconds", "Time to describe one record (reads, describer, write)",
    ["provider"], buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
DESCRIBE_QUEUE_DEPTH = Gauge(
    "transcriber_describe_queue_depth", "Records whose description is pending"
)
TRANSCRIPT_QUALITY = Counter(
    "transcriber_transcript_quality_total",
    "Quality reports made when a recognizer transcript is stored, by verdict (good, check, "
    "poor: docs/recognition.md, \"Quality report\")", ["verdict"],
)
LINK_REQUESTS = Counter(
    "transcriber_link_requests_total",
    "Requests under a link for people outside (/s/: its page, downloads, audio) by outcome: "
    "served, not_found (unknown, malformed, expired or revoked: one answer), limited, "
    "not_ready (no transcript to download yet), bad_format",
    ["outcome"],
)
REPLIES_UNDELIVERED = Counter(
    "transcriber_replies_undelivered_total", "Replies and notices that could not be delivered",
    ["reason"],
)
WEBHOOK_DELIVERIES = Counter(
    "transcriber_webhook_deliveries_total",
    "Webhook delivery attempts by outcome: retry (no 2xx; tried again later), or the "
    "delivery's end: delivered (2xx), failed (its window passed), gone (410: the webhook "
    "was disabled), left_space (a space webhook's record left the space: never sent)",
    ["outcome"],
)
WEBHOOK_QUEUE_DEPTH = Gauge(
    "transcriber_webhook_queue_depth", "Webhook deliveries waiting to be sent (pending)"
)
WEBHOOK_IN_FLIGHT = Gauge(
    "transcriber_webhook_in_flight",
    "Webhook delivery attempts running now (at most webhooks.concurrency)",
)
WEBHOOK_TARGET_PAUSES = Counter(
    "transcriber_webhook_target_pauses_total",
    "Attempts whose target did not answer at all (timeout, connection, name, refused "
    "address), each backing its webhook off",
)
RESUMABLE_UPLOADS = Counter(
    "transcriber_resumable_uploads_total",
    "Resumable (tus) uploads by outcome: created, finished (became a record), refused "
    "(complete but not taken: not audio, too long, over the quota), terminated (DELETE), "
    "expired (removed by the sweeper), orphan (a partial file with no upload, removed)",
    ["outcome"],
)
LIVE_TEXT_WINDOWS = Counter(
    "transcriber_live_text_windows_total",
    "Windows of uploads going on taken for text while recording, by outcome: recognized, "
    "silent (skipped unrecognized), failed (the recognizer failed; tried again), "
    "unreadable (not audio this server decodes: no preview for that upload)",
    ["outcome"],
)
LEASE_EXPIRIES = Counter(
    "transcriber_lease_expiries_total",
    "Claims that took a record whose previous lease had expired",
)
WYOMING_REQUESTS = Counter(
    "transcriber_wyoming_requests_total",
    "Wyoming voice commands and refusals by outcome (transcribed, not_allowed, busy, "
    "too_long, malformed, unsupported_language, unsupported_audio, unavailable, failed; "
    "archived and archive_failed with wyoming.archive)",
    ["outcome"],
)
WYOMING_SECONDS = Histogram(
    "transcriber_wyoming_seconds",
    "A voice command's wait from its audio-stop to its transcript being sent",
    buckets=(0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30),
)
PROVIDER_CALL_SECONDS = Histogram(
    "transcriber_provider_call_seconds", "Outbound provider calls", ["provider", "call"],
    buckets=_STEP_BUCKETS,
)
RECOGNITION_SPEED_SAMPLES = Counter(
    "transcriber_recognition_speed_samples_total",
    "Finished parts folded into the stored recognition speed the estimates use, by "
    "outcome: used, outlier (more than 3x off the stored figure: bounded), skipped "
    "(under a second of audio)", ["provider", "outcome"],
)
RECOGNITION_REALTIME_FACTOR = Histogram(
    "transcriber_recognition_realtime_factor",
    "Seconds of recognition per second of audio (a recognizer running on this machine; "
    "below 1 is faster than real time)",
    ["provider"],
    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 4),
)
RECOGNITION_UNCOVERED_SECONDS = Counter(
    "transcriber_recognition_uncovered_seconds_total",
    "Seconds of speech (as the VAD finds it) that a decoding left unheard: `after` is "
    "`decoding` (found by the coverage check, then decoded again sequentially) or "
    "`repair` (still unheard after that)",
    ["provider", "after"],
)
RECOGNITION_EMPTY_CLIPS = Counter(
    "transcriber_recognition_empty_clips_total",
    "Clips of speech the batched decoding gave no text for (each decoded again)",
    ["provider"],
)
RECOGNITION_REPAIRS = Counter(
    "transcriber_recognition_repairs_total",
    "Spans of a part decoded again sequentially because the coverage check failed",
    ["provider"],
)
RECOGNITION_REDECODED = Counter(
    "transcriber_recognition_redecoded_total",
    "Clips a recognizer running here decoded again the safe way because they failed a "
    "check (`reason`: compression, repeats, logprob, non_speech, outside_clip; a clip "
    "failing several counts under each)",
    ["reason"],
)
RECOGNITION_UNCLEAR_SECONDS = Counter(
    "transcriber_recognition_unclear_seconds_total",
    "Seconds of speech whose decoded text a recognizer running here rejected (a loop's copies "
    "past the second): saved as unclear, never as text",
)
STAGE_OLDEST_SECONDS = Gauge(
    "transcriber_stage_oldest_seconds",
    "Age in its stage of the oldest record not halted, by stage with a limit (read on scrape)",
    ["stage"],
)
STAGE_LIMIT_SECONDS = Gauge(
    "transcriber_stage_limit_seconds",
    "How long a record may stay in the stage before it is halted stuck (P11)", ["stage"],
)
HTTP_REQUESTS = Counter(
    "transcriber_http_requests_total", "HTTP requests by route and status", ["route", "status"]
)
HTTP_REQUEST_SECONDS = Histogram(
    "transcriber_http_request_seconds", "HTTP request duration by route", ["route"],
    buckets=_FAST_BUCKETS,
)
TOKEN_CHECKS = Counter(
    "transcriber_token_checks_total",
    "Bearer tokens presented, by outcome (ok, unknown: bad or revoked, expired, malformed, "
    "read_only: a read token refused a write)",
    ["outcome"],
)
OPENAI_TRANSLATIONS = Counter(
    "transcriber_openai_translations_total",
    "POST /v1/audio/translations whose file was read, by outcome (done, timed_out, "
    "not_audio, failed)",
    ["outcome"],
)
OPENAI_TRANSCRIPTIONS = Counter(
    "transcriber_openai_transcriptions_total",
    "POST /v1/audio/transcriptions that got their record stored, by how the wait ended "
    "(done, halted, timed_out, deleted, client_gone, revoked: the token was revoked or "
    "expired meanwhile)",
    ["outcome"],
)

STORAGE_FREE_BYTES = Gauge(
    "transcriber_storage_free_bytes",
    "Free bytes on the file system of the data folder (read on scrape)",
)
STORAGE_MIN_FREE_BYTES = Gauge(
    "transcriber_storage_min_free_bytes",
    "storage.min_free_bytes: uploads and downloads need this much free beyond their size",
)

DUTY_HELD = Gauge(
    "transcriber_duty_held",
    "1 while this process holds the singleton duty (telegram-polling, outbox, sweeps, "
    "describer), else 0; summed over processes, at most 1 per duty",
    ["duty"],
)

TELEGRAM_UPDATES = Counter(
    "transcriber_telegram_updates_total",
    "Telegram updates dealt with, by outcome (accepted, repeated, refused_<reason>, …)",
    ["outcome"],
)
TELEGRAM_POLL_FAILURES = Counter(
    "transcriber_telegram_poll_failures_total",
    "Failed Bot API polls (getMe, getUpdates) that were retried", ["call"],
)


def renders_json(fmt: str, *, terminal: bool) -> bool:
    """Pure: JSON lines unless asked for the console, or `auto` on a terminal."""
    return fmt == "json" or (fmt == "auto" and not terminal)


class _ServiceHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The one stdlib handler this module installs (replaced, never stacked)."""


def configure_logging(level: str = "INFO", fmt: str = "auto") -> None:
    """Console rendering on a terminal, JSON lines otherwise (or as asked), for
    structlog events and for the stdlib records of libraries (aiohttp, asyncio)."""
    terminal = sys.stderr.isatty()
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if renders_json(fmt, terminal=terminal)
        else structlog.dev.ConsoleRenderer(colors=terminal)
    )
    numeric_level = logging.getLevelNamesMapping()[level.upper()]
    stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    handler = _ServiceHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        foreign_pre_chain=[structlog.stdlib.add_log_level, structlog.stdlib.add_logger_name,
                           stamp, structlog.processors.format_exc_info],
    ))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _ServiceHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric_level)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    server_log = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, MalformedRequestFilter) for f in server_log.filters):
        server_log.addFilter(MalformedRequestFilter())


class MalformedRequestFilter(logging.Filter):
    """aiohttp logs a malformed request (the client's fault) with a traceback
    whose message quotes the request's bytes, where a header can carry a file
    name. Such a record becomes one `bad_http_request` event with the error
    class and status only; everything else passes untouched."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            structlog.get_logger("aiohttp.server").info(
                "bad_http_request", error=type(error).__name__, status=error.code)
            return False
        return True
