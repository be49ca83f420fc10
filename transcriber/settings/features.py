"""The sections of the features around the pipeline: descriptions, questions,
webhooks, links, watched folders and the Wyoming server (docs/settings.md)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from transcriber.settings.values import Network, Secret

DESCRIBER_PROVIDERS = ("extractive", "openai", "off")


@dataclass(frozen=True, slots=True, kw_only=True)
class DescriberSettings:
    """The title, brief and topics written for each record (docs/describer.md)."""

    # extractive (offline, the default), openai (an OpenAI-compatible chat-completions
    # endpoint), off (nothing is described; what a person types stays as it is).
    provider: str = "extractive"
    # The endpoint's base, the part before /chat/completions (Ollama:
    # http://127.0.0.1:11434/v1; Yandex: https://llm.api.cloud.yandex.net/v1).
    base_url: str = ""
    api_key: Secret | None = None
    model: str = ""
    timeout_seconds: float = 120.0
    # One record's description (all its requests, parts and the one retry) ends by then.
    deadline_seconds: float = 1800.0
    # Sent as `max_tokens`: a description is a few hundred tokens; the model is not
    # trusted to stop on its own.
    max_answer_tokens: int = 1024
    # A longer transcript is described in parts of this size and the parts' answers combined.
    max_input_chars: int = 24000
    # Tries of one record before its description is `failed` (the openai provider then
    # answers with the extractive description instead).
    attempts_limit: int = 5
    retry_base_seconds: float = 10.0
    retry_cap_seconds: float = 600.0
    # A Telegram reply waits this long for the record's title before it goes without one.
    reply_wait_seconds: float = 30.0
    # The queue's round when nothing wakes it (retries due, rows of an earlier run).
    poll_seconds: float = 5.0


ASK_PROVIDERS = ("offline", "openai")


@dataclass(frozen=True, slots=True, kw_only=True)
class AskSettings:
    """Questions put to the archive (docs/ask.md)."""

    # offline (the default: the passages are the answer) or openai (an OpenAI-compatible
    # chat-completions endpoint writes a short answer from them, citing them).
    provider: str = "offline"
    base_url: str = ""
    api_key: Secret | None = None
    model: str = ""
    timeout_seconds: float = 60.0
    # Sent as `max_tokens`: a short answer; the model is not trusted to stop on its own.
    max_answer_tokens: int = 800
    # The passages' text in one prompt at most (the rest of the passages are not sent).
    max_prompt_chars: int = 12000


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookSettings:
    # How long a delivery is tried (from its event) before it is given up (`failed`).
    delivery_window_hours: float = 24.0
    # Targets on loopback, private and link-local networks (a receiver on this
    # machine or the LAN); metadata, multicast and unspecified addresses stay refused.
    allow_private_targets: bool = False
    # Backoff between the tries of one delivery: base · 2^(n-1), capped; a longer
    # Retry-After of the receiver wins.
    retry_base_seconds: float = 1.0
    retry_cap_seconds: float = 600.0
    # The delivery actor's look for due deliveries (written by any transaction).
    poll_seconds: float = 1.0
    # Deliveries sent at once (each waits at most the request timeout), and the
    # share of them one person's webhooks, or one target host, may hold: a
    # receiver that never answers keeps at most that many waiting.
    concurrency: int = 8
    per_owner_concurrency: int = 2
    per_host_concurrency: int = 2
    connect_timeout_seconds: float = 5.0
    request_timeout_seconds: float = 10.0
    # Webhooks one person may have.
    per_user_max: int = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkSettings:
    """Links for people outside (docs/sharing.md, "Links")."""

    # A link lasts `expires_in_days` (7 when not given), at most this many days.
    max_days: int = 90
    # Links one record may hold at once (expired ones are dropped when a new one is made).
    per_record_max: int = 20
    # Requests under one link's path (page, downloads, audio ranges) per minute, in
    # bursts up to all of them; each address is also charged its `server` budget.
    requests_per_minute: int = 120


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchSettings:
    """The watched folders (docs/watched-folder.md): their new audio files become
    records of `owner`."""

    # Folders whose new audio files become records (env: comma-separated); empty: off.
    dirs: tuple[str, ...] = ()
    # The login the records belong to (created if new); required when `dirs` is set.
    owner: str = ""
    # The space (its name) the records are filed into; the owner must be its editor or
    # admin there, else the files wait (docs/watched-folder.md).
    space: str = ""
    # A file is taken once its size and time stayed the same this long.
    stable_seconds: float = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class WyomingSettings:
    """The Wyoming speech-to-text server (Home Assistant's voice pipeline;
    docs/integrations.md). The protocol has no authentication: only the addresses
    in `allowed` are served, and it listens on loopback unless told otherwise."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 10300
    # Peers served (addresses or CIDR networks); every other connection is refused.
    allowed: tuple[Network, ...] = (
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    )
    # Voice commands are not kept; true: each becomes a record of `archive_login` (an
    # ordinary upload, recognized again by the pipeline with speakers and all).
    archive: bool = False
    archive_login: str = ""
    # A voice command longer than this is refused (its audio is held in memory).
    max_audio_seconds: int = 30
    # Clients served at once; more wait at the door (the recognizer runs two at a time).
    max_clients: int = 16
    # A client that sends nothing for this long is let go.
    idle_seconds: float = 30.0
    # Announce the server on the LAN by mDNS (`_wyoming._tcp`, Home Assistant's
    # discovery); needs the `zeroconf` extra. The name: `transcriber-<host name>`
    # when empty.
    zeroconf: bool = False
    zeroconf_name: str = ""
