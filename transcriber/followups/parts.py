"""The values every follow-up shares: the occasion it follows (`Moment`), the facts
of the run its row depends on (`Run`) and what its worker is built from (`Parts`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from transcriber.core.clock import Clock
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason
from transcriber.followups.card import Cards
from transcriber.ports import Describer, Notifier, WebhookTransport
from transcriber.settings import Settings

Occasion = Literal["done", "halted"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Moment:
    """What a follow-up follows: a record's `done` or its halt."""

    record_id: str
    occasion: Occasion
    halt_reason: HaltReason | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """The facts of this run a follow-up's row depends on, read at the occasion."""

    bot_running: bool
    present: frozenset[str]
    """The follow-ups whose worker this pipeline was given."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Parts:
    """What a follow-up's worker is built from (the service's, or a test's)."""

    writer: Writer
    readers: ReaderPool
    clock: Clock
    settings: Settings
    notifier: Callable[[], Notifier | None] = lambda: None
    """The running notifier, read at each send; None in a run without the bot."""
    cards: Cards | None = None
    describers: tuple[Describer, Describer | None] | None = None
    """The describer and its fallback; None when `describer.provider` is `off` here."""
    webhook_transport: WebhookTransport | None = None
    wake: Callable[[str], None] = lambda name: None
    """Wakes another follow-up's worker by name (a reply waits for its description)."""


