"""The living status message against the fake Bot API, on the fake clock: the first
answer is edited stage by stage (uploaded → normalized → submitted → transcribed →
done, or the halt reason), at most once per chat every `status_edit_seconds`;
a 429's `retry_after` holds the chat; "message is not modified" is no error."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from aiogram import Bot
from structlog.testing import capture_logs

from tests.helpers.bot import ALICE_ID, BOB_ID, OGG, DoorHarness
from tests.helpers.pipeline import named, until
from tests.helpers.texts import T, en
from transcriber.bot import texts
from transcriber.bot.client import make_bot
from transcriber.bot.status import (
    EditThrottle,
    StatusActor,
    StatusProgress,
    render_status,
    worth_showing,
)
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.pipeline.progress import load_progress
from transcriber.settings import Settings, TelegramSettings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_telegram import FakeTelegram
from transcriber.testing.recognizer import FakeRecognizer


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveTo(Command[None]):
    """What the pipeline's writes leave behind (stage, or a halt)."""

    name: ClassVar[str] = "test_move_to"
    record_id: str
    state: str
    halt_reason: str | None = None

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(
            "UPDATE audio_records SET state = :state, halt_reason = :reason, "
            "halted_at = CASE WHEN :reason IS NULL THEN NULL ELSE :now END WHERE id = :id",
            {"state": self.state, "reason": self.halt_reason, "now": ctx.now(),
             "id": self.record_id})


@dataclass
class Rig:
    fake: FakeTelegram
    actor: StatusActor
    bot: Bot
    clock: FakeClock
    readers: ReaderPool
    writer: Writer
    settings: TelegramSettings

    async def take(self, sender_id: int, **sender: Any) -> tuple[str, int]:
        """A voice message taken in by the door; its record and status message."""
        _, message = self.fake.push_voice(sender_id=sender_id,
                                          file_id=self.fake.add_file(OGG))
        if sender:
            message["from"].update(sender)
        async def stored() -> bool:
            return await self.readers.fetch_one(
                "SELECT record_id FROM telegram_status s JOIN audio_records r "
                "ON r.id = s.record_id WHERE r.tg_message_id = :m",
                {"m": message["message_id"]}) is not None
        await until(stored)
        row = await self.readers.fetch_one(
            "SELECT s.record_id, s.message_id FROM telegram_status s JOIN audio_records r "
            "ON r.id = s.record_id WHERE r.tg_message_id = :m", {"m": message["message_id"]})
        assert row is not None
        return row["record_id"], row["message_id"]

    def edits_of(self, message_id: int) -> list[str]:
        return [e.text for e in self.fake.edits if e.message_id == message_id]


@pytest.fixture
async def rig(door_harness: Callable[..., DoorHarness], fake_tg: FakeTelegram, clock: FakeClock,
              readers: ReaderPool, writer: Writer) -> AsyncIterator[Rig]:
    harness = door_harness(status_edit_seconds=3.0)
    harness.start()
    bot = make_bot(harness.settings.telegram)
    yield Rig(fake=fake_tg, actor=StatusActor(bot, settings=harness.settings.telegram,
                                              readers=readers, writer=writer, clock=clock),
              bot=bot, settings=harness.settings.telegram,
              clock=clock, readers=readers, writer=writer)
    await bot.session.close()


async def test_the_first_answer_is_edited_stage_by_stage_up_to_done(rig: Rig) -> None:
    record_id, message_id = await rig.take(ALICE_ID)
    assert rig.fake.shown_text(ALICE_ID, message_id) == en(T.ACCEPTED)
    await rig.actor.round()
    assert rig.edits_of(message_id) == []  # nothing moved yet: no edit
    for stage in ("normalized", "submitted", "transcribed", "done"):
        await rig.writer.ask(MoveTo(record_id=record_id, state=stage))
        rig.clock.advance(3.0)
        await rig.actor.round()
    shown = [en(T.STATUS_MESSAGE, stage=en(key)) for key in (
        T.STAGE_NORMALIZED, T.STAGE_SUBMITTED, T.STAGE_TRANSCRIBED, T.STAGE_DONE)]
    assert rig.edits_of(message_id) == shown
    # Done: no longer followed, so later rounds edit nothing.
    rig.clock.advance(10.0)
    await rig.actor.round()
    assert len(rig.edits_of(message_id)) == 4
    live = await rig.readers.fetch_one(
        "SELECT live FROM telegram_status WHERE record_id = :id", {"id": record_id})
    assert live is not None
    assert live["live"] == 0


async def test_a_halt_shows_the_reason_in_plain_words_in_the_senders_language(
    rig: Rig,
) -> None:
    record_id, message_id = await rig.take(ALICE_ID, language_code="ru")
    assert rig.fake.shown_text(ALICE_ID, message_id) == texts.say("ru", T.ACCEPTED)
    await rig.writer.ask(MoveTo(record_id=record_id, state="uploaded",
                                halt_reason="step_failed"))
    await rig.actor.round()
    [edit] = rig.edits_of(message_id)
    assert edit == texts.say("ru", T.STATUS_MESSAGE, stage=texts.say(
        "ru", T.STAGE_HALTED, why=texts.say("ru", T.HALT_STEP_FAILED)))


async def test_edits_are_throttled_per_chat_on_the_clock(rig: Rig) -> None:
    first, first_message = await rig.take(ALICE_ID)
    second, second_message = await rig.take(ALICE_ID)
    other, other_message = await rig.take(BOB_ID)
    for record_id in (first, second, other):
        await rig.writer.ask(MoveTo(record_id=record_id, state="normalized"))
    await rig.actor.round()
    # One edit in Alice's chat (the other waits its turn); Bob's chat is not held by it.
    assert len(rig.edits_of(first_message)) + len(rig.edits_of(second_message)) == 1
    assert len(rig.edits_of(other_message)) == 1
    rig.clock.advance(2.9)
    await rig.actor.round()
    assert len(rig.edits_of(first_message)) + len(rig.edits_of(second_message)) == 1
    rig.clock.advance(0.1)
    await rig.actor.round()
    assert len(rig.edits_of(first_message)) == len(rig.edits_of(second_message)) == 1


async def test_retry_after_holds_the_chat_for_as_long_as_telegram_asks(rig: Rig) -> None:
    record_id, message_id = await rig.take(ALICE_ID)
    await rig.writer.ask(MoveTo(record_id=record_id, state="normalized"))
    rig.fake.fail_next("editMessageText", 429, "Too Many Requests: retry after 10",
                       retry_after=10)
    await rig.actor.round()
    assert rig.edits_of(message_id) == []
    rig.clock.advance(9.0)
    await rig.actor.round()
    assert rig.edits_of(message_id) == []  # still inside Telegram's 10 s
    rig.clock.advance(1.0)
    await rig.actor.round()
    assert len(rig.edits_of(message_id)) == 1


async def test_message_is_not_modified_is_no_error(rig: Rig) -> None:
    record_id, _ = await rig.take(ALICE_ID)
    await rig.writer.ask(MoveTo(record_id=record_id, state="normalized"))
    rig.fake.fail_next("editMessageText", 400, "Bad Request: message is not modified")
    with capture_logs() as logs:
        await rig.actor.round()
    assert [e for e in logs if e["log_level"] in ("warning", "error")] == []
    [entry] = named(logs, "status_edited")
    assert entry["record_id"] == record_id
    # Counted as shown: the next round does not try again.
    rig.clock.advance(5.0)
    calls = len([c for c in rig.fake.calls if c[0] == "editMessageText"])
    await rig.actor.round()
    assert len([c for c in rig.fake.calls if c[0] == "editMessageText"]) == calls


async def test_a_deleted_status_message_stops_being_followed(rig: Rig) -> None:
    record_id, _ = await rig.take(ALICE_ID)
    await rig.writer.ask(MoveTo(record_id=record_id, state="normalized"))
    rig.fake.fail_next("editMessageText", 400, "Bad Request: message to edit not found")
    await rig.actor.round()
    live = await rig.readers.fetch_one(
        "SELECT live FROM telegram_status WHERE record_id = :id", {"id": record_id})
    assert live is not None
    assert live["live"] == 0


@dataclass(frozen=True)
class _Progress:
    fraction: float
    eta_seconds: float | None
    stage: str = "queue"


def test_the_progress_hook_shows_percent_and_eta() -> None:
    text = render_status("en", state="submitted", halted=False, halt_reason=None,
                         progress=_Progress(fraction=0.42, eta_seconds=600))
    assert text == en(T.STATUS_MESSAGE, stage=en(
        T.PROGRESS_ETA, stage=en(T.STAGE_SUBMITTED), percent=42, eta=en(T.MINUTES, n="10")))
    russian = render_status("ru", state="submitted", halted=False, halt_reason=None,
                            progress=_Progress(fraction=0.5, eta_seconds=None))
    assert "50%" in russian
    assert "распознаётся" in russian


async def test_the_status_message_shows_the_progress_of_a_long_recording(
    rig: Rig, readers: ReaderPool, writer: Writer, clock: FakeClock,
) -> None:
    record_id, message_id = await rig.take(ALICE_ID)
    shown: dict[str, _Progress] = {}

    async def progress(of: str) -> StatusProgress | None:
        return worth_showing(shown.get(of))

    actor = StatusActor(rig.bot, settings=rig.settings, readers=readers,
                        writer=writer, clock=clock, progress=progress)
    shown[record_id] = _Progress(fraction=0.0, eta_seconds=None)  # nothing done yet
    await actor.round()
    assert rig.edits_of(message_id) == []
    await writer.ask(MoveTo(record_id=record_id, state="normalized"))
    shown[record_id] = _Progress(fraction=0.42, eta_seconds=600)
    clock.advance(3.0)
    await actor.round()
    assert rig.edits_of(message_id) == [en(T.STATUS_MESSAGE, stage=en(
        T.PROGRESS_ETA, stage=en(T.STAGE_NORMALIZED), percent=42, eta=en(T.MINUTES, n="10")))]


def test_the_throttle_allows_one_edit_per_interval_and_honours_holds() -> None:
    throttle = EditThrottle(3.0)
    assert throttle.may_edit(1, 0.0)
    throttle.edited(1, 0.0)
    assert not throttle.may_edit(1, 2.99)
    assert throttle.may_edit(2, 0.0)
    assert throttle.may_edit(1, 3.0)
    throttle.hold(1, 20.0)
    assert not throttle.may_edit(1, 19.0)
    assert throttle.may_edit(1, 20.0)




def test_a_queued_record_shows_its_estimate_and_a_running_one_what_happens() -> None:
    queued = _Progress(fraction=0.0, eta_seconds=40, stage="queue")
    assert worth_showing(queued) is queued  # nothing done yet, but an estimate to tell
    text = render_status("en", state="uploaded", halted=False, halt_reason=None,
                         progress=queued)
    assert text == en(T.STATUS_MESSAGE, stage=en(
        T.PROGRESS_ETA, stage=en(T.STAGE_UPLOADED), percent=0, eta=en(T.SECONDS, n="40")))
    russian = render_status("ru", state="normalized", halted=False, halt_reason=None,
                            progress=_Progress(fraction=0.5, eta_seconds=5, stage="recognize"))
    assert russian == texts.say("ru", T.STATUS_MESSAGE, stage=texts.say(
        "ru", T.PROGRESS_ETA, stage=texts.say("ru", T.STAGE_SUBMITTED), percent=50,
        eta=texts.say("ru", T.SECONDS, n="5")))
    assert "распознаётся" in russian
    assert "осталось около 5" in russian
    preparing = render_status("en", state="uploaded", halted=False, halt_reason=None,
                              progress=_Progress(fraction=0.01, eta_seconds=None,
                                                 stage="normalize"))
    assert preparing == en(T.STATUS_MESSAGE, stage=en(
        T.PROGRESS, stage=en(T.STAGE_PREPARING), percent=1))


async def test_a_short_voice_message_gets_an_estimate_in_its_first_edit(
    rig: Rig, readers: ReaderPool, writer: Writer, clock: FakeClock,
) -> None:
    """The real progress read: a voice message just taken in (3 s, queued) is shown
    with its estimate at the status actor's first round."""
    record_id, message_id = await rig.take(ALICE_ID)
    settings = Settings()
    recognizer = FakeRecognizer(expected_real_time_factor=5.0)

    async def progress(of: str) -> StatusProgress | None:
        return worth_showing(await load_progress(readers, of, settings=settings,
                                                 now=clock.now(),
                                                 capabilities=recognizer.capabilities))

    found = await load_progress(readers, record_id, settings=settings, now=clock.now(),
                                capabilities=recognizer.capabilities)
    assert found is not None
    # The fake transcoder's 3 s of audio at 5 s of work a second (and a moment for ffmpeg).
    assert (found.stage, found.eta_seconds) == ("queue", 15)
    actor = StatusActor(rig.bot, settings=rig.settings, readers=readers, writer=writer,
                        clock=clock, progress=progress)
    await actor.round()
    assert rig.edits_of(message_id) == [en(T.STATUS_MESSAGE, stage=en(
        T.PROGRESS_ETA, stage=en(T.STAGE_UPLOADED), percent=0, eta=en(T.SECONDS, n="15")))]
