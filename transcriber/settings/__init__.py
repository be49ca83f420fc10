"""The frozen settings tree: embedded defaults, then a TOML file, then the environment.

Every key `section.key` can be overridden by `TRANSCRIBER_<SECTION>_<KEY>`.
A bad value raises `ConfigError` naming the key; the CLI turns it into one
line and exit code 2. Secrets are `Secret` values whose repr hides them.
`model` holds the tree (`features` the sections around the pipeline, `values`
its value types), `loading` builds it, `checks` refuses bad values.

Imports: `core` and `domain` only (a value's rule, such as a login's, is the
domain's), so every floor above may read the settings.
"""

from transcriber.settings.features import (
    ASK_PROVIDERS,
    DESCRIBER_PROVIDERS,
    AskSettings,
    DescriberSettings,
    LinkSettings,
    WatchSettings,
    WebhookSettings,
    WyomingSettings,
)
from transcriber.settings.loading import load_settings, setting_keys
from transcriber.settings.model import (
    BOT_TOKEN,
    CLIENT_ENV,
    CLOUD_DOWNLOAD_MAX_BYTES,
    CONFIG_ENV,
    ENV_PREFIX,
    LOCAL_DOWNLOAD_MAX_BYTES,
    NON_SETTING_ENV,
    NON_SETTING_ENV_PREFIXES,
    TELEGRAM_LANGUAGES,
    FfmpegSettings,
    LoggingSettings,
    PipelineSettings,
    RecognizerSettings,
    S3Settings,
    ServerSettings,
    Settings,
    SpeakersSettings,
    SpeechkitSettings,
    StorageSettings,
    TelegramSettings,
)
from transcriber.settings.values import Network, Secret

__all__ = [
    "ASK_PROVIDERS",
    "BOT_TOKEN",
    "CLIENT_ENV",
    "CLOUD_DOWNLOAD_MAX_BYTES",
    "CONFIG_ENV",
    "DESCRIBER_PROVIDERS",
    "ENV_PREFIX",
    "LOCAL_DOWNLOAD_MAX_BYTES",
    "NON_SETTING_ENV",
    "NON_SETTING_ENV_PREFIXES",
    "TELEGRAM_LANGUAGES",
    "AskSettings",
    "DescriberSettings",
    "FfmpegSettings",
    "LinkSettings",
    "LoggingSettings",
    "Network",
    "PipelineSettings",
    "RecognizerSettings",
    "S3Settings",
    "Secret",
    "ServerSettings",
    "Settings",
    "SpeakersSettings",
    "SpeechkitSettings",
    "StorageSettings",
    "TelegramSettings",
    "WatchSettings",
    "WebhookSettings",
    "WyomingSettings",
    "load_settings",
    "setting_keys",
]
