"""What the step actor does about the follow-ups (`followups.registry.FOLLOWUPS`).

At `done` and at a halt the actor asks `FollowUps.effects` for the rows of
every follow-up this run wants (`WriteFollowUp`), written in the transaction
of the advance or of the halt: either the record moves and every row lands,
or nothing does (P3, P6, P10). Once it landed — and only then: a stale write
tells no one — `FollowUps.after` tells each follow-up's worker in this
process (the reply is sent at once, the describer and the webhooks woken).
A follow-up that fails there undoes nothing and never fails a step; its
worker's own rounds take it from there. What is logged: the record id, the
follow-up's name, the error's class; never transcript text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from transcriber.followups.parts import Moment, Run
from transcriber.followups.registry import FOLLOWUPS, Enqueue, FollowUp, Workers
from transcriber.ports import Notifier, ReplyAddress, Undelivered

if TYPE_CHECKING:
    from transcriber.db.writer import WriteContext
    from transcriber.domain.quality import Quality
    from transcriber.domain.stages import HaltReason
    from transcriber.followups.queue import QueueWorker

log = structlog.get_logger(__name__)


class NullNotifier:
    """The notifier of a run without the bot: every send is `bot_not_running`."""

    async def send_transcript(self, address: ReplyAddress, text: str, *, title: str = "",
                              brief: str = "", quality: Quality | None = None) -> int | None:
        raise Undelivered("bot_not_running")

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> int | None:
        raise Undelivered("bot_not_running")


NotifierSource = Callable[[], Notifier]
"""Read at each delivery, so a bot started after the pipeline is still used."""


def running_notifier(source: NotifierSource) -> Callable[[], Notifier | None]:
    """The notifier, or None in a run without the bot (the outbox then waits)."""

    def current() -> Notifier | None:
        notifier = source()
        return None if isinstance(notifier, NullNotifier) else notifier

    return current


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteFollowUp:
    """Effect of `done` or of a halt: one follow-up's durable row, in its transaction."""

    name: str
    enqueue: Enqueue
    moment: Moment

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        await self.enqueue(ctx, self.moment)


class FollowUps:
    """The declared follow-ups as one pipeline runs them: their rows, then their workers."""

    def __init__(self, workers: Workers | Mapping[str, QueueWorker], *,
                 notifier: Callable[[], Notifier | None] = lambda: None,
                 declared: tuple[FollowUp, ...] = FOLLOWUPS) -> None:
        self.workers = workers if isinstance(workers, Workers) else Workers(dict(workers))
        self._notifier = notifier
        self._declared = declared

    def run(self) -> Run:
        return Run(bot_running=self._notifier() is not None,
                   present=frozenset(self.workers))

    def effects(self, moment: Moment) -> tuple[WriteFollowUp, ...]:
        """The rows this run writes with `moment`'s transaction."""
        run = self.run()
        return tuple(WriteFollowUp(name=f.name, enqueue=f.enqueue, moment=moment)
                     for f in self._declared
                     if moment.occasion in f.occasions and f.wanted(run))

    async def after(self, moment: Moment) -> None:
        """Once `moment` is stored: each follow-up's worker here is told (never raises)."""
        for followup in self._declared:
            worker = self.workers.get(followup.name)
            if worker is None or moment.occasion not in followup.occasions:
                continue
            try:
                await worker.after(moment)
            except Exception as exc:  # its rows stay pending: its own rounds take them
                log.warning("followup_after_failed", followup=followup.name,
                            record_id=moment.record_id, error=type(exc).__name__)
                worker.wake()
