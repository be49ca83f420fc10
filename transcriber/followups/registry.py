"""What follows a record's `done` (and its halt): the one declared list, `FOLLOWUPS`.

Each entry names a follow-up and says, in one place: on which occasions it
acts (`done`, `halted`), the durable row it writes in the transaction of that
occasion (`enqueue`: a crash cannot lose it, a stale step writes none), whether
this run writes it (`wanted`: the reply only with the bot running, the
description only with a describer), which singleton duty's holder runs its
queue worker, and how that worker is built from the service's parts (`build`).
After the occasion's commit the pipeline tells the follow-up's worker, if this
process has one (`QueueWorker.after`: a wake, or the reply's send at once).

A new follow-up (sharing notices, exports) is one consumer module — a
`QueueWorker` subclass with its `round`, its table's enqueue and its `build` —
plus one entry here; the service (`service.followups`) builds, supervises and
stops every entry's worker, and the step actor (`followups.after.FollowUps`)
writes and tells every entry, without naming any.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from transcriber.db.commands.describe import enqueue_description
from transcriber.db.commands.telegram import enqueue_reply
from transcriber.db.commands.webhooks import enqueue_event
from transcriber.db.writer import WriteContext
from transcriber.followups import describe, reply, webhooks
from transcriber.followups.parts import Moment, Occasion, Parts, Run
from transcriber.followups.queue import QueueWorker
from transcriber.ports import Duty

Enqueue = Callable[[WriteContext, Moment], Awaitable[object]]
Build = Callable[[Parts], QueueWorker | None]


def always(run: Run) -> bool:
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class FollowUp:
    name: str
    """Its worker's task name and its key among the workers."""
    occasions: frozenset[Occasion]
    enqueue: Enqueue
    build: Build
    duty: Duty
    wanted: Callable[[Run], bool] = always
    grace_seconds: float | None = None
    """How long work in flight may finish at the stop (None: the server's grace)."""


# -- the entries' rows, written in the occasion's transaction -----------------------------

async def enqueue_reply_of(ctx: WriteContext, moment: Moment) -> None:
    """A Telegram record's reply (`done`) or halt notice; none for an HTTP record."""
    if moment.occasion == "done":
        await enqueue_reply(ctx, record_id=moment.record_id, kind="transcript")
    else:
        await enqueue_reply(ctx, record_id=moment.record_id, kind="halt_notice",
                            halt_reason=None if moment.halt_reason is None
                            else moment.halt_reason.value)


async def enqueue_description_of(ctx: WriteContext, moment: Moment) -> None:
    await enqueue_description(ctx, record_id=moment.record_id)


async def enqueue_webhooks_of(ctx: WriteContext, moment: Moment) -> None:
    await enqueue_event(ctx, record_id=moment.record_id,
                        event="record.done" if moment.occasion == "done" else "record.halted")


REPLY, DESCRIBE, WEBHOOKS = reply.NAME, describe.NAME, webhooks.NAME

FOLLOWUPS: tuple[FollowUp, ...] = (
    # The sender's reply in Telegram (the transcript, or why the record halted).
    FollowUp(name=REPLY, occasions=frozenset({"done", "halted"}), enqueue=enqueue_reply_of,
             wanted=lambda run: run.bot_running and REPLY in run.present,
             build=reply.build, duty=Duty.OUTBOX, grace_seconds=1.0),
    # The record's title, brief and topics (not a stage: `done` does not wait for it).
    FollowUp(name=DESCRIBE, occasions=frozenset({"done"}), enqueue=enqueue_description_of,
             wanted=lambda run: DESCRIBE in run.present,
             build=describe.build, duty=Duty.DESCRIBER),
    # The owner's webhooks (`record.done`, `record.halted`; `record.deleted` is written by
    # the deletion itself, which is no pipeline occasion).
    FollowUp(name=WEBHOOKS, occasions=frozenset({"done", "halted"}),
             enqueue=enqueue_webhooks_of, build=webhooks.build, duty=Duty.OUTBOX),
)

W = TypeVar("W", bound=QueueWorker)


@dataclass(frozen=True, slots=True)
class Workers:
    """The follow-ups' workers one process built, by name."""

    by_name: Mapping[str, QueueWorker] = field(default_factory=dict)

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_name)

    def get(self, name: str) -> QueueWorker | None:
        return self.by_name.get(name)

    def of(self, name: str, kind: type[W]) -> W:
        """The worker `name`, as its consumer's type (a `LookupError` when absent)."""
        worker = self.by_name.get(name)
        if not isinstance(worker, kind):
            raise LookupError(f"no {name} worker of type {kind.__name__}")
        return worker


def build_workers(parts: Parts,
                  declared: tuple[FollowUp, ...] = FOLLOWUPS) -> Workers:
    """Every declared follow-up's worker this process can have."""
    built = {}
    for followup in declared:
        worker = followup.build(parts)
        if worker is not None:
            built[followup.name] = worker
    return Workers(built)
