"""The settings tree: frozen dataclasses with the embedded defaults (the sections of
the features around the pipeline are in `features`; `Secret` and `Network` in
`values`)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from transcriber.settings.features import (
    AskSettings,
    DescriberSettings,
    LinkSettings,
    WatchSettings,
    WebhookSettings,
    WyomingSettings,
)
from transcriber.settings.values import Network, Secret

ENV_PREFIX = "TRANSCRIBER_"
# The shape aiogram checks when a Bot is made (its error is a traceback):
# the bot's numeric id, a colon, the secret, no white space.
BOT_TOKEN = re.compile(r"[0-9]+:\S+")
CONFIG_ENV = "TRANSCRIBER_CONFIG"
# The command-line client's own variables (`transcriber upload`; docs/api.md,
# "The command-line client"): it talks to a server, it is not one.
CLIENT_ENV = ("TRANSCRIBER_SERVER_URL", "TRANSCRIBER_TOKEN")
# Variables under the prefix that are not settings (docs/settings.md lists them).
NON_SETTING_ENV = frozenset({CONFIG_ENV, *CLIENT_ENV})
NON_SETTING_ENV_PREFIXES = ("TRANSCRIBER_BENCH_",)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8080
    trusted_proxies: tuple[Network, ...] = (
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    )
    anonymous_user: str = "local"
    upload_max_bytes: int = 8 * 1024**3
    record_max_seconds: int = 6 * 3600
    rate_limit_requests: int = 120
    rate_limit_window_seconds: float = 60.0
    rate_limit_idle_seconds: float = 600.0
    rate_limit_poll_share: float = 0.125
    page_default: int = 30
    page_max: int = 100
    shutdown_graceful_seconds: float = 5.0
    shutdown_forced_seconds: float = 20.0
    # Hostile pages and connections (docs/hostile-input.md says why and the numbers).
    # Host names besides localhost, 127.0.0.1, ::1 and `host` ("*": any).
    allowed_hosts: tuple[str, ...] = ()
    header_read_timeout_seconds: float = 15.0
    uploads_max: int = 16
    uploads_per_user_max: int = 4
    upload_idle_seconds: float = 60.0
    upload_min_bytes_per_second: int = 8192
    upload_rate_window_seconds: float = 120.0
    # Resumable uploads (tus, docs/api.md "Resumable uploads"): an upload no PATCH
    # renewed for this long expires and its bytes are removed; how many unfinished
    # uploads one person may hold (each may reserve up to upload_max_bytes on disk).
    resumable_expire_seconds: float = 86400.0
    resumable_open_per_user_max: int = 20
    rate_limit_table_max: int = 10000
    # Client addresses `/metrics` answers (others: 403); behind a proxy, the client's.
    metrics_allowed: tuple[Network, ...] = (
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    )
    # Audio budgets (docs/hostile-input.md, "Audio budgets, backups and local files"):
    # what intake refuses by the probe, and how much not-yet-transcribed audio one
    # person may queue (0: no quota).
    max_sample_rate: int = 192000
    max_channels: int = 8
    queued_audio_max_seconds_per_user: int = 24 * 3600
    # JSON request bodies (edits, corrections): the most bytes one may hold, and how
    # many may be arriving at once (docs/hostile-input.md, "Request bodies").
    json_max_bytes: int = 64 * 1024
    json_bodies_max: int = 32
    # `POST /v1/audio/transcriptions` waits this long for the record to be done,
    # then answers 504 with the record's id (docs/api.md, "OpenAI's speech-to-text API").
    openai_wait_seconds: float = 600.0
    # Those waiting requests (each holds a socket and reads the database every 2 s):
    # at most this many at once in all (503 past it) and for one person (429 past it).
    openai_waits_max: int = 64
    openai_waits_per_user_max: int = 4
    # Personal access tokens (docs/api.md, "Tokens"): the most one person holds, and
    # how many one person may make an hour (429 with Retry-After past it).
    tokens_per_user_max: int = 100
    token_creations_per_hour: int = 20
    # How often a process asks for a singleton duty it does not hold, and a holder
    # looks at its PostgreSQL lock's connection (docs/operations.md, "Roles").
    duty_poll_seconds: float = 10.0


STORAGE_FILES = ("local", "s3")
DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True, slots=True, kw_only=True)
class StorageSettings:
    data_dir: Path = Path("data")
    # None or empty: SQLite in data_dir (the embedded default). `postgresql://user:password@
    # host:port/db`: PostgreSQL through asyncpg, shared by every process of the
    # service (docs/storage.md, "Two engines"). A secret: it may carry a password.
    database_url: Secret | None = None
    # Where originals, normalized copies and parts live: `local` (data_dir/records)
    # or `s3` (the bucket of the s3.* settings, under s3.prefix).
    files: str = "local"
    read_connections: int = 4
    busy_timeout_ms: int = 5000
    writer_batch_max: int = 64
    # An upload or download starts only with its declared size plus this much free.
    min_free_bytes: int = 1024**3
    # Caches shared by every data folder (the joined Whisper model); none:
    # $XDG_CACHE_HOME/transcriber, else ~/.cache/transcriber. Never backed up.
    cache_dir: Path | None = None
    # Corrections kept per record (the newest); the recognizer's original is kept besides.
    revisions_max: int = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineSettings:
    workers: int = 3
    lease_seconds: int = 60
    attempts_limit: int = 8
    backoff_base_seconds: float = 5.0
    backoff_cap_seconds: float = 300.0
    backoff_jitter: float = 0.1
    poll_first_delay_seconds: float = 10.0
    poll_delay_seconds: float = 5.0
    idle_sleep_seconds: float = 1.0
    own_work_limit_minutes: float = 60.0
    foreign_work_limit_minutes: float = 1440.0
    step_time_limit_minutes: float = 60.0
    # Per-stage lease overrides, e.g. {"submitted": "30"} (seconds); others use lease_seconds.
    stage_lease_seconds: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecognizerSettings:
    provider: str = "local"
    model_dir: Path | None = None
    # The operator's models (docs/recognition.md, "Models from a folder"): one folder
    # per model with its `manifest.json`, every file checked before it loads.
    models_dir: Path | None = None
    # Language -> model name in `models_dir` (e.g. {"ru": "gigaam-v3"}); the language
    # the record asks for, else the one heard; every other language: the bundled model.
    routes: Mapping[str, str] = field(default_factory=dict)
    language: str = ""
    beam_size: int = 5
    concurrency: int = 1
    cpu_threads: int = 0
    # A local recognition may run this many seconds per second of audio (plus 2 min).
    time_limit_factor: float = 0.5
    # Long audio is recognized in parts of about this length, one part per claim.
    part_seconds: int = 600
    # Parts are cut in pauses: no overlap needed (then every utterance of a part is kept).
    part_overlap_seconds: int = 0
    # faster-whisper's batched pipeline on clips of the speech, or its sequential decoding
    # (false): batched is faster at the same WER (docs/recognition.md, "Sequential or
    # batched", and the hard-audio corpus under "Every second of speech").
    batched: bool = True
    # Clips decoded at once: memory grows with it (8 took serve to 1.4 GB, 4 to 0.9 GB).
    batch_size: int = 4
    # Telling speakers apart (local recognizer): auto (records of 10 s and more), on, off.
    # The key and its variable TRANSCRIBER_RECOGNIZER_DIARIZATION are a user-facing
    # contract and keep their name; the code calls the concept "speakers"
    # (`pipeline.speakers.speakers_apply`).
    diarization: str = "auto"
    # Known voices (docs/speakers.md): the speakers a person names teach the owner's
    # voice profiles, and a new record's speakers get suggested names. False: no
    # profile is written and nothing is suggested (`transcriber voices purge` deletes
    # what exists).
    voice_profiles: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeakersSettings:
    # Exports name a speaker by its suggested name, marked "Anna (?)", when the owner
    # has not named it; false: the card shows the suggestion, exports do not use it.
    apply_suggestions: bool = False
    # A suggestion is made from this cosine similarity up (`voices.similarity`):
    # the middle of the thresholds at which the calibration bench meets its goals
    # (tests/bench/test_voice_calibration.py, docs/speakers.md "Known voices").
    suggestion_threshold: float = 0.62


@dataclass(frozen=True, slots=True, kw_only=True)
class FfmpegSettings:
    path: Path | None = None
    bitrate: str = "32k"
    probe_timeout_seconds: float = 30.0
    probe_concurrency: int = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeechkitSettings:
    api_key: Secret | None = None
    stt_url: str = "https://stt.api.cloud.yandex.net"
    operation_url: str = "https://operation.api.cloud.yandex.net"
    language: str = "ru-RU"
    model: str = "general"
    max_part_seconds: int = 14400
    part_overlap_seconds: int = 5
    connect_timeout_seconds: float = 10.0
    read_timeout_seconds: float = 60.0
    status_checks_per_hour: int = 2500


@dataclass(frozen=True, slots=True, kw_only=True)
class S3Settings:
    endpoint_url: str = "https://storage.yandexcloud.net"
    region: str = "ru-central1"
    bucket: str = ""
    prefix: str = "transcriber/"
    access_key_id: Secret | None = None
    secret_access_key: Secret | None = None
    connect_timeout_seconds: float = 10.0
    read_timeout_seconds: float = 120.0


CLOUD_DOWNLOAD_MAX_BYTES = 20 * 1024 * 1024
LOCAL_DOWNLOAD_MAX_BYTES = 2 * 1024 * 1024 * 1024
TELEGRAM_LANGUAGES = ("", "ru", "en")


@dataclass(frozen=True, slots=True, kw_only=True)
class TelegramSettings:
    token: Secret | None = None
    api_base: str = "https://api.telegram.org"
    allowed: Mapping[str, str] = field(default_factory=dict)
    # Long polling: how long one getUpdates waits for news on Telegram's side.
    poll_timeout_seconds: int = 30
    # Every other Bot API call (getFile, sendMessage, …).
    request_timeout_seconds: int = 30
    # A whole file download (20 MB over a slow link).
    download_timeout_seconds: int = 600
    # Largest file taken in; unset: the Bot API's 20 MB, or 2 GB with a local server.
    download_max_bytes: int | None = None
    # `api_base` is a local `telegram-bot-api --local`: files are read in place.
    local_mode: bool = False
    # Backoff between failed polls and failed intake tries: base · 2^(n-1), capped.
    retry_base_seconds: float = 1.0
    retry_cap_seconds: float = 60.0
    # Tries for one update before the sender is asked to send it again.
    update_attempts: int = 5
    # Quick tries of one send (network, 5xx, a short 429) before the outbox backs off.
    send_attempts: int = 3
    # How long the outbox keeps trying a reply before it ends it undelivered.
    delivery_window_hours: float = 24.0
    # The outbox's round when nothing wakes it (retries due, rows of an earlier run).
    delivery_poll_seconds: float = 5.0
    # Force one catalogue ("ru" or "en"); empty: by the sender's language_code.
    language: str = ""
    # The living status message: least time between two edits in one chat, and
    # how often the records behind the live messages are looked at.
    status_edit_seconds: float = 3.0
    status_poll_seconds: float = 1.0
    # With `local_mode`: the local Bot API server's working folder (its `--dir`).
    # Files are read only inside it (no `..`, no symlink on the way, regular files).
    local_files_dir: Path | None = None

    @property
    def download_limit(self) -> int:
        if self.download_max_bytes is not None:
            return self.download_max_bytes
        return LOCAL_DOWNLOAD_MAX_BYTES if self.local_mode else CLOUD_DOWNLOAD_MAX_BYTES


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggingSettings:
    level: str = "INFO"
    format: str = "auto"


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    server: ServerSettings = field(default_factory=ServerSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    recognizer: RecognizerSettings = field(default_factory=RecognizerSettings)
    speakers: SpeakersSettings = field(default_factory=SpeakersSettings)
    ffmpeg: FfmpegSettings = field(default_factory=FfmpegSettings)
    speechkit: SpeechkitSettings = field(default_factory=SpeechkitSettings)
    s3: S3Settings = field(default_factory=S3Settings)
    telegram: TelegramSettings = field(default_factory=TelegramSettings)
    describer: DescriberSettings = field(default_factory=DescriberSettings)
    ask: AskSettings = field(default_factory=AskSettings)
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)
    links: LinkSettings = field(default_factory=LinkSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    wyoming: WyomingSettings = field(default_factory=WyomingSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
