"""Checks of a built settings tree: a bad value raises `ConfigError` naming its key."""

from __future__ import annotations

import ipaddress

from transcriber.core.errors import ConfigError
from transcriber.domain.stages import claimable_stages
from transcriber.domain.text import LoginRefused, canonical_login
from transcriber.settings.features import (
    ASK_PROVIDERS,
    DESCRIBER_PROVIDERS,
    AskSettings,
    DescriberSettings,
    LinkSettings,
    WatchSettings,
    WebhookSettings,
)
from transcriber.settings.model import (
    BOT_TOKEN,
    DATABASE_URL_SCHEMES,
    STORAGE_FILES,
    TELEGRAM_LANGUAGES,
    PipelineSettings,
    Settings,
    TelegramSettings,
)


def _ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def validate(settings: Settings) -> None:
    wyoming = settings.wyoming
    checks: list[tuple[str, bool, str]] = [
        ("server.port", 0 <= settings.server.port <= 65535, "must be 0..65535"),
        ("wyoming.port", 0 <= wyoming.port <= 65535, "must be 0..65535"),
        ("wyoming.max_audio_seconds", 1 <= wyoming.max_audio_seconds <= 600,
         "must be 1..600"),
        ("wyoming.max_clients", wyoming.max_clients >= 1, "must be at least 1"),
        ("wyoming.idle_seconds", wyoming.idle_seconds > 0, "must be positive"),
        ("wyoming.archive_login", not wyoming.archive or bool(wyoming.archive_login),
         "must name the person voice commands are archived for when wyoming.archive is on"),
        ("wyoming.host", not wyoming.zeroconf or _ip_literal(wyoming.host),
         "must be an IP address (or 0.0.0.0 / ::) when wyoming.zeroconf is on: it is the "
         "address announced"),
        ("wyoming.zeroconf_name", len(wyoming.zeroconf_name.encode()) <= 63
         and "." not in wyoming.zeroconf_name, "must be at most 63 bytes, without dots"),
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
        ("server.resumable_expire_seconds", settings.server.resumable_expire_seconds >= 60,
         "must be at least 60"),
        ("server.resumable_open_per_user_max", settings.server.resumable_open_per_user_max >= 1,
         "must be at least 1"),
        ("server.upload_idle_seconds", settings.server.upload_idle_seconds > 0,
         "must be positive"),
        ("server.upload_min_bytes_per_second", settings.server.upload_min_bytes_per_second >= 0,
         "must not be negative"),
        ("server.upload_rate_window_seconds", settings.server.upload_rate_window_seconds > 0,
         "must be positive"),
        ("server.rate_limit_table_max", settings.server.rate_limit_table_max >= 1,
         "must be at least 1"),
        ("server.max_sample_rate", settings.server.max_sample_rate >= 8000,
         "must be at least 8000"),
        ("server.max_channels", settings.server.max_channels >= 1, "must be at least 1"),
        ("server.queued_audio_max_seconds_per_user",
         settings.server.queued_audio_max_seconds_per_user >= 0, "must not be negative"),
        ("server.page_default", 1 <= settings.server.page_default <= settings.server.page_max,
         "must be between 1 and server.page_max"),
        ("server.json_max_bytes", settings.server.json_max_bytes >= 1024,
         "must be at least 1024"),
        ("server.json_bodies_max", settings.server.json_bodies_max >= 1, "must be at least 1"),
        ("server.openai_wait_seconds", settings.server.openai_wait_seconds > 0,
         "must be positive"),
        ("server.openai_waits_max", settings.server.openai_waits_max >= 1,
         "must be at least 1"),
        ("server.openai_waits_per_user_max",
         1 <= settings.server.openai_waits_per_user_max <= settings.server.openai_waits_max,
         "must be between 1 and server.openai_waits_max"),
        ("server.tokens_per_user_max", settings.server.tokens_per_user_max >= 1,
         "must be at least 1"),
        ("server.token_creations_per_hour", settings.server.token_creations_per_hour >= 1,
         "must be at least 1"),
        # A dead holder's duty is taken over within a minute.
        ("server.duty_poll_seconds", 0 < settings.server.duty_poll_seconds <= 60,
         "must be in (0, 60]"),
        ("storage.read_connections", settings.storage.read_connections >= 1, "must be at least 1"),
        ("storage.busy_timeout_ms", settings.storage.busy_timeout_ms >= 0, "must not be negative"),
        ("storage.writer_batch_max", settings.storage.writer_batch_max >= 1, "must be at least 1"),
        ("storage.files", settings.storage.files in STORAGE_FILES,
         "must be one of " + ", ".join(STORAGE_FILES)),
        ("storage.revisions_max", settings.storage.revisions_max >= 1, "must be at least 1"),
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
        # A route names a model in the folder: routes without the folder go nowhere.
        ("recognizer.routes", not settings.recognizer.routes
         or settings.recognizer.models_dir is not None, "needs recognizer.models_dir"),
        ("speakers.suggestion_threshold",
         0 < settings.speakers.suggestion_threshold <= 1, "must be in (0, 1]"),
        ("logging.level", settings.logging.level.upper() in
         {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}, "must be a log level name"),
        ("logging.format", settings.logging.format in {"auto", "json", "console"},
         "must be auto, json or console"),
    ]
    for key, ok, problem in checks:
        if not ok:
            raise ConfigError(key, problem)
    _validate_storage(settings)
    _validate_pipeline(settings.pipeline)
    _validate_telegram(settings.telegram)
    _validate_describer(settings.describer)
    _validate_ask(settings.ask)
    _validate_webhooks(settings.webhooks)
    _validate_links(settings.links)
    _validate_watch(settings.watch)
    for telegram_id, login in settings.telegram.allowed.items():
        if not telegram_id.lstrip("-").isdigit():
            raise ConfigError("telegram.allowed", f"key {telegram_id!r} is not a Telegram user id")
        _check_login("telegram.allowed", login, f"the login of {telegram_id}")
    if settings.wyoming.archive_login:
        _check_login("wyoming.archive_login", settings.wyoming.archive_login, "the login")
    if settings.server.anonymous_user:
        _check_login("server.anonymous_user", settings.server.anonymous_user, "the login")
    if settings.server.anonymous_user and not _is_loopback(settings.server.host):
        raise ConfigError(
            "server.anonymous_user",
            "must be empty when server.host is not a loopback address",
        )


def _validate_watch(watch: WatchSettings) -> None:
    if watch.stable_seconds <= 0:
        raise ConfigError("watch.stable_seconds", "must be positive")
    if watch.dirs and not watch.owner:
        raise ConfigError("watch.owner", "must name the login the watched folders' records "
                          "belong to when watch.dirs is set")
    if watch.owner:
        _check_login("watch.owner", watch.owner, "the login")


def _check_login(key: str, login: str, what: str) -> None:
    """The web door's rule (`text.canonical_login`); the message never quotes the login."""
    try:
        canonical = canonical_login(login)
    except LoginRefused as exc:
        raise ConfigError(key, f"{what} {exc}") from None
    if canonical != login:
        raise ConfigError(key, f"{what} is not in its canonical (NFKC) form")


def _validate_storage(settings: Settings) -> None:
    url = settings.storage.database_url
    if url is not None and url.value and not url.value.startswith(DATABASE_URL_SCHEMES):
        raise ConfigError("storage.database_url",
                          "must be empty (SQLite) or a postgresql:// URL")
    if settings.storage.files == "s3" and not settings.s3.bucket:
        raise ConfigError("s3.bucket", "must be set with storage.files = s3")


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
    if telegram.token is not None and not BOT_TOKEN.fullmatch(telegram.token.value):
        # Never the value: it is a secret even when malformed.
        raise ConfigError("telegram.token", "is not a bot token (digits, a colon, the secret)")
    if not telegram.api_base.startswith(("http://", "https://")):
        raise ConfigError("telegram.api_base", "must be an http:// or https:// URL")
    if telegram.local_mode and telegram.local_files_dir is None:
        # Without it a local server's answer could name any file on the machine.
        raise ConfigError("telegram.local_files_dir",
                          "must be set with telegram.local_mode (the Bot API server's --dir)")
    if telegram.local_files_dir is not None and not telegram.local_files_dir.is_absolute():
        raise ConfigError("telegram.local_files_dir", "must be an absolute path")


def _validate_describer(describer: DescriberSettings) -> None:
    if describer.provider not in DESCRIBER_PROVIDERS:
        raise ConfigError("describer.provider", "must be one of " + ", ".join(DESCRIBER_PROVIDERS))
    positive = ("timeout_seconds", "deadline_seconds", "max_answer_tokens", "attempts_limit",
                "retry_base_seconds", "poll_seconds")
    for key in positive:
        if getattr(describer, key) <= 0:
            raise ConfigError(f"describer.{key}", "must be positive")
    if describer.retry_cap_seconds < describer.retry_base_seconds:
        raise ConfigError("describer.retry_cap_seconds",
                          "must not be below describer.retry_base_seconds")
    if describer.reply_wait_seconds < 0:
        raise ConfigError("describer.reply_wait_seconds", "must not be negative")
    if describer.max_input_chars < 2000:
        raise ConfigError("describer.max_input_chars", "must be at least 2000")
    if describer.base_url and not describer.base_url.startswith(("http://", "https://")):
        raise ConfigError("describer.base_url", "must be an http:// or https:// URL")
    if describer.provider == "openai":
        if not describer.base_url:
            raise ConfigError("describer.base_url", "must be set with describer.provider = openai")
        if not describer.model:
            raise ConfigError("describer.model", "must be set with describer.provider = openai")


def _validate_ask(ask: AskSettings) -> None:
    if ask.provider not in ASK_PROVIDERS:
        raise ConfigError("ask.provider", "must be one of " + ", ".join(ASK_PROVIDERS))
    for key in ("timeout_seconds", "max_answer_tokens"):
        if getattr(ask, key) <= 0:
            raise ConfigError(f"ask.{key}", "must be positive")
    if ask.max_prompt_chars < 1000:
        raise ConfigError("ask.max_prompt_chars", "must be at least 1000")
    if ask.base_url and not ask.base_url.startswith(("http://", "https://")):
        raise ConfigError("ask.base_url", "must be an http:// or https:// URL")
    if ask.provider == "openai":
        if not ask.base_url:
            raise ConfigError("ask.base_url", "must be set with ask.provider = openai")
        if not ask.model:
            raise ConfigError("ask.model", "must be set with ask.provider = openai")


def _validate_webhooks(webhooks: WebhookSettings) -> None:
    positive = ("delivery_window_hours", "retry_base_seconds", "poll_seconds",
                "connect_timeout_seconds", "request_timeout_seconds")
    for key in positive:
        if getattr(webhooks, key) <= 0:
            raise ConfigError(f"webhooks.{key}", "must be positive")
    if webhooks.retry_cap_seconds < webhooks.retry_base_seconds:
        raise ConfigError("webhooks.retry_cap_seconds",
                          "must not be below webhooks.retry_base_seconds")
    for key in ("concurrency", "per_owner_concurrency", "per_host_concurrency"):
        if getattr(webhooks, key) < 1:
            raise ConfigError(f"webhooks.{key}", "must be at least 1")
    if webhooks.per_user_max < 0:
        raise ConfigError("webhooks.per_user_max", "must not be negative")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _validate_links(links: LinkSettings) -> None:
    for key in ("max_days", "per_record_max", "requests_per_minute"):
        if getattr(links, key) < 1:
            raise ConfigError(f"links.{key}", "must be at least 1")
    if links.max_days > 3650:
        raise ConfigError("links.max_days", "must be at most 3650 (ten years)")
