"""The pipeline supervisor: N named step actors and their orderly stop.

The follow-ups the actors write and tell at `done` and halts are given (the
service's workers, `service.followups`) or made here for a run without them
(tests, the load test): the declared rows are written, and the reply's worker
made here sends only right after a commit.

Stop, in order: actors stop claiming (an idle actor wakes at once); running
steps get `server.shutdown_graceful_seconds` to finish; the rest are
cancelled and give their attempt back (P16). The writer, started before the
pipeline, closes after it and drains its mailbox, so those releases land.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from transcriber.core.clock import Clock
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import step_names
from transcriber.followups.after import FollowUps, NotifierSource, running_notifier
from transcriber.followups.reply import NAME as REPLY
from transcriber.followups.reply import Outbox
from transcriber.pipeline import policy
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.settled import SettledRecords
from transcriber.pipeline.step import Step
from transcriber.ports import RecordFiles
from transcriber.settings import Settings

log = structlog.get_logger(__name__)

OnDeath = Callable[[BaseException], None]


class MissingSteps(Exception):
    """The step table lacks a step the stage descriptor names."""


def check_step_table(steps: Mapping[str, Step]) -> None:
    """Every step of the descriptor must have a runner (P8: nothing forgotten)."""
    missing = [name for name in step_names() if name not in steps]
    if missing:
        raise MissingSteps(f"no step for {', '.join(missing)}")


class Engine:
    def __init__(
        self,
        *,
        settings: Settings,
        clock: Clock,
        writer: Writer,
        readers: ReaderPool,
        files: RecordFiles,
        steps: Mapping[str, Step],
        notifier: NotifierSource,
        rng: policy.Random = random.random,
        extras: Mapping[str, Any] | None = None,
        settled: SettledRecords | None = None,
        followups: FollowUps | None = None,
    ) -> None:
        check_step_table(steps)
        self._settings = settings
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        running = running_notifier(notifier)
        self.followups = followups or FollowUps({REPLY: Outbox(
            writer=writer, readers=readers, clock=clock, notifier=running,
            settings=settings.telegram)}, notifier=running)
        self.actors = [
            StepActor(
                name=f"step-actor-{number}", settings=settings, clock=clock, writer=writer,
                readers=readers, files=files, steps=steps, followups=self.followups, rng=rng,
                extras=extras, settled=settled,
            )
            for number in range(1, settings.pipeline.workers + 1)
        ]

    @property
    def tasks(self) -> tuple[asyncio.Task[None], ...]:
        return tuple(self._tasks)

    def start(self, on_death: OnDeath | None = None) -> None:
        """Start every actor as a named task; `on_death(exc)` hears of one that died."""
        for actor in self.actors:
            task = asyncio.create_task(actor.run_forever(self._stopping), name=actor.name)
            task.add_done_callback(functools.partial(self._actor_done, on_death=on_death))
            self._tasks.append(task)
        log.info("pipeline_started", workers=len(self.actors))

    def _actor_done(self, task: asyncio.Task[None], on_death: OnDeath | None) -> None:
        if self._stopping.is_set() or task.cancelled():
            return
        error = task.exception()
        reason: BaseException = error or RuntimeError(f"{task.get_name()} ended")
        log.critical("step_actor_died", actor=task.get_name(), error=type(reason).__name__)
        if on_death is not None:
            on_death(reason)

    async def stop(self) -> None:
        """Stop claiming, give running steps the graceful time, then cancel them."""
        self._stopping.set()
        if not self._tasks:
            return
        grace = self._settings.server.shutdown_graceful_seconds
        _, pending = await asyncio.wait(self._tasks, timeout=max(grace, 0.0))
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        for task in self._tasks:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                log.error("step_actor_failed", actor=task.get_name(), error=type(error).__name__)
        log.info("pipeline_stopped", cancelled=len(pending))
