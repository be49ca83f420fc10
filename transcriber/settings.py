"""The frozen settings tree: embedded defaults, then a TOML file, then the environment.

Every key `section.key` can be overridden by `TRANSCRIBER_<SECTION>_<KEY>`.
A bad value raises `ConfigError` naming the key; the CLI turns it into one
line and exit code 2. Secrets are `Secret` values whose repr hides them.
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import os
import re
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from transcriber.errors import ConfigError
from transcriber.stages import claimable_stages

ENV_PREFIX = "TRANSCRIBER_"
# The shape aiogram checks when a Bot is made (its error is a traceback):
# the bot's numeric id, a colon, the secret, no white space.
_BOT_TOKEN = re.compile(r"[0-9]+:\S+")
CONFIG_ENV = "TRANSCRIBER_CONFIG"
# Variables under the prefix that are not settings (docs/settings.md lists them).
NON_SETTING_ENV = frozenset({CONFIG_ENV})
NON_SETTING_ENV_PREFIXES = ("TRANSCRIBER_BENCH_",)


@dataclass(frozen=True, slots=True)
class Secret:
    """A value that never appears in logs, reprs or error messages."""

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "Secret(***)"

    def __str__(self) -> str:
        return "***"


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


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
    # Hostile pages and connections (docs/operations.md says why and the numbers).
    # Host names besides localhost, 127.0.0.1, ::1 and `host` ("*": any).
    allowed_hosts: tuple[str, ...] = ()
    header_read_timeout_seconds: float = 15.0
    uploads_max: int = 16
    uploads_per_user_max: int = 4
    upload_idle_seconds: float = 60.0
    upload_min_bytes_per_second: int = 8192
    upload_rate_window_seconds: float = 120.0
    rate_limit_table_max: int = 10000


@dataclass(frozen=True, slots=True, kw_only=True)
class StorageSettings:
    data_dir: Path = Path("data")
    read_connections: int = 4
    busy_timeout_ms: int = 5000
    writer_batch_max: int = 64
    # An upload or download starts only with its declared size plus this much free.
    min_free_bytes: int = 1024**3
    # Caches shared by every data folder (the joined Whisper model); none:
    # $XDG_CACHE_HOME/transcriber, else ~/.cache/transcriber. Never backed up.
    cache_dir: Path | None = None


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
    # faster-whisper's batched pipeline instead of its sequential decoding (see recognition.md).
    batched: bool = False
    batch_size: int = 8
    # Telling speakers apart (local recognizer): auto (records of 10 s and more), on, off.
    diarization: str = "auto"


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
    ffmpeg: FfmpegSettings = field(default_factory=FfmpegSettings)
    speechkit: SpeechkitSettings = field(default_factory=SpeechkitSettings)
    s3: S3Settings = field(default_factory=S3Settings)
    telegram: TelegramSettings = field(default_factory=TelegramSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)


def load_settings(
    config_file: Path | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Defaults, then the TOML file (argument or `TRANSCRIBER_CONFIG`), then env."""
    env = os.environ if environ is None else environ
    if config_file is None and env.get(CONFIG_ENV):
        config_file = Path(env[CONFIG_ENV])
    file_values: dict[str, Any] = {}
    if config_file is not None:
        try:
            file_values = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError("config", f"file {config_file} does not exist") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("config", f"not valid TOML: {exc}") from exc
    return _build(file_values, env)


def setting_keys() -> dict[str, str]:
    """Every `section.key`, with its environment variable."""
    keys: dict[str, str] = {}
    for section_field in dataclasses.fields(Settings):
        section_cls = typing.get_type_hints(Settings)[section_field.name]
        for key_field in dataclasses.fields(section_cls):
            full = f"{section_field.name}.{key_field.name}"
            keys[full] = f"{ENV_PREFIX}{section_field.name}_{key_field.name}".upper()
    return keys


def _unknown(name: str, known: list[str], what: str) -> ConfigError:
    """A misspelt name must never be silently ignored: say so, with the closest one."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    return ConfigError(name, f"unknown {what}{hint}")


def _check_env_names(env: Mapping[str, str]) -> None:
    known = sorted(setting_keys().values())
    for name in env:
        if (not name.startswith(ENV_PREFIX) or name in NON_SETTING_ENV
                or name.startswith(NON_SETTING_ENV_PREFIXES)):
            continue
        if name not in known:
            raise _unknown(name, known, "setting variable")


def _build(file_values: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    _check_env_names(env)
    known = [f.name for f in dataclasses.fields(Settings)]
    for section in file_values:
        if section not in known:
            raise _unknown(section, known, "section")
    sections: dict[str, Any] = {}
    for section_field in dataclasses.fields(Settings):
        section_cls = typing.get_type_hints(Settings)[section_field.name]
        raw_section = file_values.get(section_field.name, {})
        if not isinstance(raw_section, Mapping):
            raise ConfigError(section_field.name, "must be a table")
        sections[section_field.name] = _build_section(
            section_field.name, section_cls, raw_section, env
        )
    settings = Settings(**sections)
    _validate(settings)
    return settings


def _build_section(
    name: str, cls: type[Any], raw: Mapping[str, Any], env: Mapping[str, str]
) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    for key in raw:
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
            hint = f"; did you mean {name}.{close[0]}?" if close else ""
            raise ConfigError(f"{name}.{key}", f"unknown setting{hint}")
    values: dict[str, Any] = {}
    for key in names:
        env_name = f"{ENV_PREFIX}{name}_{key}".upper()
        full_key = f"{name}.{key}"
        if env_name in env:
            values[key] = _coerce(full_key, hints[key], env[env_name], from_env=True)
        elif key in raw:
            values[key] = _coerce(full_key, hints[key], raw[key], from_env=False)
    return cls(**values)


def _coerce(key: str, hint: Any, value: Any, *, from_env: bool) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        inner = next(a for a in args if a is not type(None))
        if value is None or value == "":
            return None
        return _coerce(key, inner, value, from_env=from_env)
    if hint is bool:
        return _to_bool(key, value)
    if hint is int:
        return _to_number(key, int, value)
    if hint is float:
        return _to_number(key, float, value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(key, "must be a string")
        return value
    if hint is Path:
        if not isinstance(value, str) or not value:
            raise ConfigError(key, "must be a non-empty path")
        return Path(value)
    if hint is Secret:
        if not isinstance(value, str):
            raise ConfigError(key, "must be a string")
        return Secret(value)
    if origin is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise ConfigError(key, "must be a list or a comma-separated string")
        texts = [str(item).strip() for item in items if str(item).strip()]
        if args and args[0] is str:
            return tuple(texts)
        return tuple(_to_network(key, text) for text in texts)
    if origin is Mapping:
        return _to_mapping(key, value)
    raise ConfigError(key, f"unsupported setting type {hint!r}")  # pragma: no cover


def _to_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(value, str) and value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(key, "must be true or false")


def _to_number(key: str, kind: type[int] | type[float], value: Any) -> int | float:
    if isinstance(value, bool):
        raise ConfigError(key, f"must be {'an integer' if kind is int else 'a number'}")
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ConfigError(
            key, f"must be {'an integer' if kind is int else 'a number'}, got {value!r}"
        ) from None
    if kind is int and isinstance(value, float) and not value.is_integer():
        raise ConfigError(key, f"must be an integer, got {value!r}")
    return number


def _to_network(key: str, text: str) -> Network:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ConfigError(key, f"{text!r} is not an address or CIDR network") from None


def _to_mapping(key: str, value: Any) -> Mapping[str, str]:
    if isinstance(value, str):
        try:
            value = orjson.loads(value) if value.strip() else {}
        except orjson.JSONDecodeError:
            raise ConfigError(key, "must be a JSON object") from None
    if not isinstance(value, Mapping):
        raise ConfigError(key, "must be an object of strings")
    result: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(v, str | int) or isinstance(v, bool):
            raise ConfigError(key, "values must be strings")
        result[str(k)] = str(v)
    return types.MappingProxyType(result)


def _validate(settings: Settings) -> None:
    checks: list[tuple[str, bool, str]] = [
        ("server.port", 0 <= settings.server.port <= 65535, "must be 0..65535"),
        ("server.upload_max_bytes", settings.server.upload_max_bytes > 0, "must be positive"),
        ("server.record_max_seconds", settings.server.record_max_seconds > 0,
         "must be positive"),
        ("ffmpeg.probe_timeout_seconds", settings.ffmpeg.probe_timeout_seconds > 0,
         "must be positive"),
        ("ffmpeg.probe_concurrency", settings.ffmpeg.probe_concurrency >= 1,
         "must be at least 1"),
        ("server.rate_limit_requests", settings.server.rate_limit_requests > 0, "must be positive"),
        ("server.header_read_timeout_seconds", settings.server.header_read_timeout_seconds > 0,
         "must be positive"),
        ("server.uploads_max", settings.server.uploads_max >= 1, "must be at least 1"),
        ("server.uploads_per_user_max",
         1 <= settings.server.uploads_per_user_max <= settings.server.uploads_max,
         "must be between 1 and server.uploads_max"),
        ("server.upload_idle_seconds", settings.server.upload_idle_seconds > 0,
         "must be positive"),
        ("server.upload_min_bytes_per_second", settings.server.upload_min_bytes_per_second >= 0,
         "must not be negative"),
        ("server.upload_rate_window_seconds", settings.server.upload_rate_window_seconds > 0,
         "must be positive"),
        ("server.rate_limit_table_max", settings.server.rate_limit_table_max >= 1,
         "must be at least 1"),
        ("server.page_default", 1 <= settings.server.page_default <= settings.server.page_max,
         "must be between 1 and server.page_max"),
        ("storage.read_connections", settings.storage.read_connections >= 1, "must be at least 1"),
        ("storage.busy_timeout_ms", settings.storage.busy_timeout_ms >= 0, "must not be negative"),
        ("storage.writer_batch_max", settings.storage.writer_batch_max >= 1, "must be at least 1"),
        ("pipeline.workers", settings.pipeline.workers >= 0, "must not be negative"),
        ("pipeline.lease_seconds", settings.pipeline.lease_seconds >= 3, "must be at least 3"),
        ("pipeline.attempts_limit", settings.pipeline.attempts_limit >= 1, "must be at least 1"),
        ("pipeline.backoff_base_seconds", settings.pipeline.backoff_base_seconds > 0,
         "must be positive"),
        ("pipeline.backoff_cap_seconds",
         settings.pipeline.backoff_cap_seconds >= settings.pipeline.backoff_base_seconds,
         "must not be below pipeline.backoff_base_seconds"),
        ("pipeline.backoff_jitter", 0 <= settings.pipeline.backoff_jitter < 1, "must be in [0, 1)"),
        ("pipeline.idle_sleep_seconds", settings.pipeline.idle_sleep_seconds > 0,
         "must be positive"),
        ("recognizer.provider", settings.recognizer.provider in {"local", "speechkit"},
         "must be one of local, speechkit"),
        ("recognizer.concurrency", settings.recognizer.concurrency >= 1, "must be at least 1"),
        ("recognizer.part_seconds", settings.recognizer.part_seconds >= 10,
         "must be at least 10"),
        ("recognizer.part_overlap_seconds",
         0 <= settings.recognizer.part_overlap_seconds * 2 < settings.recognizer.part_seconds,
         "must be under half of recognizer.part_seconds"),
        ("recognizer.batch_size", settings.recognizer.batch_size >= 1, "must be at least 1"),
        ("recognizer.diarization", settings.recognizer.diarization in {"auto", "on", "off"},
         "must be auto, on or off"),
        ("logging.level", settings.logging.level.upper() in
         {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}, "must be a log level name"),
        ("logging.format", settings.logging.format in {"auto", "json", "console"},
         "must be auto, json or console"),
    ]
    for key, ok, problem in checks:
        if not ok:
            raise ConfigError(key, problem)
    _validate_pipeline(settings.pipeline)
    _validate_telegram(settings.telegram)
    for telegram_id in settings.telegram.allowed:
        if not telegram_id.lstrip("-").isdigit():
            raise ConfigError("telegram.allowed", f"key {telegram_id!r} is not a Telegram user id")
    if settings.server.anonymous_user and not _is_loopback(settings.server.host):
        raise ConfigError(
            "server.anonymous_user",
            "must be empty when server.host is not a loopback address",
        )


def _validate_pipeline(pipeline: PipelineSettings) -> None:
    claimable = {stage.value for stage in claimable_stages()}
    for stage, seconds in pipeline.stage_lease_seconds.items():
        if stage not in claimable:
            raise ConfigError("pipeline.stage_lease_seconds", f"{stage!r} is not a claimable stage")
        if not seconds.isdigit() or int(seconds) < 3:
            raise ConfigError("pipeline.stage_lease_seconds",
                              f"lease of {stage} must be an integer of at least 3 seconds")


def _validate_telegram(telegram: TelegramSettings) -> None:
    positive = ("poll_timeout_seconds", "request_timeout_seconds", "download_timeout_seconds",
                "download_limit", "retry_base_seconds", "update_attempts", "send_attempts",
                "delivery_window_hours", "delivery_poll_seconds", "status_poll_seconds")
    for key in positive:
        if getattr(telegram, key) <= 0:
            name = "download_max_bytes" if key == "download_limit" else key
            raise ConfigError(f"telegram.{name}", "must be positive")
    if telegram.status_edit_seconds < 0:
        raise ConfigError("telegram.status_edit_seconds", "must not be negative")
    if telegram.language not in TELEGRAM_LANGUAGES:
        raise ConfigError("telegram.language", "must be empty (by the sender), ru or en")
    if telegram.retry_cap_seconds < telegram.retry_base_seconds:
        raise ConfigError("telegram.retry_cap_seconds",
                          "must not be below telegram.retry_base_seconds")
    if telegram.token is not None and not _BOT_TOKEN.fullmatch(telegram.token.value):
        # Never the value: it is a secret even when malformed.
        raise ConfigError("telegram.token", "is not a bot token (digits, a colon, the secret)")
    if not telegram.api_base.startswith(("http://", "https://")):
        raise ConfigError("telegram.api_base", "must be an http:// or https:// URL")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
