"""The describer's tests: records driven to `done` with a transcript and their describe
job, a scripted describer, the job and the record's description as stored."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import MakeActor
from tests.helpers.steps import drive
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.describe import Description
from transcriber.domain.quality import Quality
from transcriber.domain.transcripts import dump_structure, plain_text
from transcriber.followups.after import FollowUps, running_notifier
from transcriber.followups.parts import Moment
from transcriber.followups.queue import QueueWorker
from transcriber.followups.registry import DESCRIBE, REPLY
from transcriber.followups.reply import Outbox
from transcriber.pipeline.effects import SaveTranscript, SetColumns
from transcriber.ports import Material, Utterance
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.notifier import RecordingNotifier
from transcriber.testing.steps import Behaviour, fake_steps


@dataclass(slots=True)
class ScriptedDescriber:
    """Answers its script one entry per call (a description, or an exception to raise),
    then `default`; keeps the materials it was given."""

    name: str = "openai:scripted"
    script: list[Description | Exception] = field(default_factory=list)
    default: Description | None = None
    given: list[Material] = field(default_factory=list)

    async def describe(self, material: Material) -> Description:
        self.given.append(material)
        answer = self.script.pop(0) if self.script else self.default
        if isinstance(answer, Exception):
            raise answer
        assert answer is not None, "the script ran out"
        return answer


class _Woken(QueueWorker):
    """The describe worker as the step actor sees it: counts its wake-ups."""

    def __init__(self, clock: FakeClock, woken: list[str]) -> None:
        super().__init__(clock=clock, poll_seconds=60.0)
        self._woken = woken

    async def after(self, moment: Moment) -> None:
        self._woken.append("wake")

    async def round(self, stopping: asyncio.Event | None = None) -> int:
        return 0


@dataclass(slots=True)
class Finisher:
    """Drives records to `done` through a step actor whose `done` asks for a description
    (unless `describing` is off); `woken` counts the describer's wake-ups."""

    make_actor: MakeActor
    writer: Writer
    readers: ReaderPool
    clock: FakeClock
    describing: bool = True
    woken: list[str] = field(default_factory=list)
    notifier: RecordingNotifier = field(default_factory=RecordingNotifier)
    outbox: Outbox | None = None
    """With an outbox (a run with the bot), a Telegram record's reply goes through it."""

    def with_bot(self, settings: Settings, *, reply_wait_seconds: float) -> Outbox:
        notifier = self.notifier
        self.outbox = Outbox(writer=self.writer, readers=self.readers, clock=self.clock,
                             notifier=running_notifier(lambda: notifier),
                             settings=settings.telegram, reply_wait_seconds=reply_wait_seconds)
        return self.outbox

    async def finish(self, said: Sequence[Utterance], *, record_id: str | None = None,
                     login: str = "alice", quality: Quality | None = None,
                     **record: Any) -> str:
        """A new record (or `record_id`, sent back to recognition) through to `done`,
        its transcript `said` (with its quality report, when given)."""
        if record_id is None:
            owner = await make_user(self.writer, login)
            record_id = await make_record(self.writer, owner, **record)
        report = () if quality is None else (SetColumns(values={"quality": quality.to_json()}),)
        steps = fake_steps({"poll": Behaviour(effects=(SaveTranscript(
            text=plain_text(said), structure_json=dump_structure(said)), *report))})
        notifier = self.notifier
        workers: dict[str, QueueWorker] = {}
        if self.outbox is not None:
            workers[REPLY] = self.outbox
        if self.describing:
            workers[DESCRIBE] = _Woken(self.clock, self.woken)
        followups = FollowUps(workers, notifier=running_notifier(lambda: notifier))
        actor = self.make_actor(steps=steps, followups=followups)
        await drive(actor, self.clock, self.readers, record_id)
        return record_id
