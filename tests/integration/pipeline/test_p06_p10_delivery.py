"""P6 (an undelivered reply never fails the step) and P10 (every halt tells the
sender)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from structlog.testing import capture_logs

from tests.helpers.factories import make_record
from tests.helpers.pipeline import (
    MakeActor,
    StoreTranscript,
    claim,
    claim_ok,
    named,
    runs,
    state_of,
    undelivered,
)
from transcriber.core.errors import NoWork
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason
from transcriber.followups.after import NullNotifier
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.notifier import RecordingNotifier, Sent
from transcriber.testing.steps import Behaviour, FakeStep

SECRET = "the sender's private words"


async def _to_transcribed(
    make_actor: MakeActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    **record: object,
) -> str:
    record_id = await make_record(writer, user, **record)  # type: ignore[arg-type]
    await writer.ask(StoreTranscript(record_id=record_id, text=SECRET))
    actor = make_actor()
    for _ in range(3):
        assert (await actor.run_once()).outcome == "success"
    return record_id


async def _assert_reached_done(readers: ReaderPool, record_id: str) -> None:
    row = await state_of(readers, record_id)
    assert row["state"] == "done"
    assert row["halted_at"] is None
    assert row["delay_time"] is None
    assert row["attempts"] == 0


# -- P6 ---------------------------------------------------------------------------------


async def test_p06_sender_door_not_running(
    make_actor: MakeActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    readers: ReaderPool,
) -> None:
    """A record taken in by Telegram in an earlier run; the service came up without
    that door; the step reaches the reply: it ends without failure, the record
    stays at the reached stage (no retry, no halt), a WARN entry names the record
    and the reason, the undelivered counter grows with that reason, and neither
    transcript nor sender text is in the entry."""
    record_id = await _to_transcribed(make_actor, writer, user, steps, source="telegram",
                                      tg_chat_id=42, tg_message_id=7)
    before_counter = undelivered("bot_not_running")
    before_failures = runs("transcribed", "failure")
    with capture_logs() as logs:
        report = await make_actor(notifier=NullNotifier()).run_once()
    assert report.outcome == "success"
    assert runs("transcribed", "failure") == before_failures
    await _assert_reached_done(readers, record_id)
    [entry] = named(logs, "reply_undelivered")
    assert entry["log_level"] == "warning"
    assert (entry["record_id"], entry["reason"]) == (record_id, "bot_not_running")
    assert undelivered("bot_not_running") == before_counter + 1
    assert SECRET not in repr(logs)


async def test_p06_record_names_no_addressee(
    make_actor: MakeActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    readers: ReaderPool, notifier: RecordingNotifier,
) -> None:
    """A Telegram record without a chat: the step ends without failure, the record
    stays at the reached stage, and an ERROR entry names the record and the
    reason (a missing chat is a symptom of corruption)."""
    record_id = await _to_transcribed(make_actor, writer, user, steps, source="telegram")
    before = undelivered("chat_missing")
    with capture_logs() as logs:
        report = await make_actor().run_once()  # the bot runs; the address is missing
    assert report.outcome == "success"
    await _assert_reached_done(readers, record_id)
    [entry] = named(logs, "reply_undelivered")
    assert entry["log_level"] == "error"
    assert (entry["record_id"], entry["reason"]) == (record_id, "chat_missing")
    assert undelivered("chat_missing") == before + 1
    assert notifier.attempts == []


async def test_p06_halt_notice_not_delivered(
    make_actor: MakeActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    readers: ReaderPool,
) -> None:
    """The record is halted and the sender's door is not running; the notice
    cannot go out: the halt stays, and an entry names the record and the
    reason."""
    record_id = await make_record(writer, user, source="telegram", tg_chat_id=5,
                                  tg_message_id=6)
    steps["normalize"].then(Behaviour(fail="permanent"))
    before = undelivered("bot_not_running")
    with capture_logs() as logs:
        report = await make_actor(notifier=NullNotifier()).run_once()
    assert report.outcome == "halted"
    row = await state_of(readers, record_id)
    assert (row["halt_reason"], row["state"]) == ("step_failed", "uploaded")
    assert row["halted_at"] is not None
    [entry] = named(logs, "reply_undelivered")
    assert (entry["record_id"], entry["reason"], entry["kind"]) == \
        (record_id, "bot_not_running", "halt_notice")
    assert undelivered("bot_not_running") == before + 1


async def test_p06_no_one_to_answer_because_the_record_came_over_http(
    make_actor: MakeActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    readers: ReaderPool, notifier: RecordingNotifier,
) -> None:
    """The record came over HTTP; the step reaches the reply: it ends without
    failure and without an undelivered entry."""
    record_id = await _to_transcribed(make_actor, writer, user, steps)
    counters = (undelivered("bot_not_running"), undelivered("chat_missing"))
    for chosen in (notifier, NullNotifier()):
        with capture_logs() as logs:
            await make_actor(notifier=chosen).run_once()
        assert named(logs, "reply_undelivered") == []
    await _assert_reached_done(readers, record_id)
    assert notifier.attempts == []
    assert (undelivered("bot_not_running"), undelivered("chat_missing")) == counters


async def test_p06_telegram_reply_is_sent_after_the_advance_landed(
    make_actor: MakeActor, writer: Writer, user: User, steps: dict[str, FakeStep],
    readers: ReaderPool, notifier: RecordingNotifier,
) -> None:
    record_id = await _to_transcribed(make_actor, writer, user, steps, source="telegram",
                                      tg_chat_id=42, tg_message_id=7)
    assert (await make_actor().run_once()).outcome == "success"
    [sent] = notifier.sent
    assert (sent.kind, sent.text, sent.address.tg_chat_id) == ("transcript", SECRET, 42)
    await _assert_reached_done(readers, record_id)


# -- P10 --------------------------------------------------------------------------------


async def test_p10_halt_for_exhausted_attempts_tells_the_sender(
    make_actor: MakeActor, writer: Writer, settings: Settings, user: User,
    clock: FakeClock, notifier: RecordingNotifier, readers: ReaderPool,
) -> None:
    """The record is halted because its attempts ran out: the sender gets a
    failure message."""
    record_id = await make_record(writer, user, source="telegram", tg_chat_id=3,
                                  tg_message_id=4)
    for _ in range(settings.pipeline.attempts_limit):  # holders that died mid-step
        await claim_ok(writer, settings)
        clock.advance(settings.pipeline.lease_seconds)
    report = await make_actor().run_once()
    assert report.outcome == "halted"
    assert (await state_of(readers, record_id))["halt_reason"] == "attempts_exhausted"
    [notice] = notifier.sent
    assert (notice.kind, notice.reason, notice.address.tg_chat_id) == \
        ("halt_notice", HaltReason.ATTEMPTS_EXHAUSTED, 3)


async def test_p10_halt_for_time_in_stage_tells_the_sender_and_the_owner_log(
    make_actor: MakeActor, writer: Writer, settings: Settings, user: User,
    clock: FakeClock, notifier: RecordingNotifier,
) -> None:
    """The record is halted because it stayed in its stage past the limit: the
    sender gets a failure message, and the owner's log has a halt entry with the
    reason."""
    record_id = await make_record(writer, user, source="telegram", tg_chat_id=8,
                                  tg_message_id=9)
    clock.advance(settings.pipeline.own_work_limit_minutes * 60 + 1)
    with capture_logs() as logs:
        report = await make_actor().run_once()
    assert report.outcome == "halted"
    [notice] = notifier.sent
    assert notice.reason is HaltReason.STUCK
    [entry] = named(logs, "record_halted")
    assert (entry["record_id"], entry["reason"], entry["log_level"]) == \
        (record_id, "stuck", "error")


@pytest.mark.parametrize("delivery", ["works", "undelivered", "door_broken", "no_bot"])
@pytest.mark.parametrize("reason", list(HaltReason))
async def test_p10_exactly_one_notice_per_halt_for_every_reason(
    make_actor: MakeActor, writer: Writer, settings: Settings, user: User,
    clock: FakeClock, steps: dict[str, FakeStep], readers: ReaderPool,
    reason: HaltReason, delivery: str,
) -> None:
    """Whatever the reason, a halt produces exactly one notice attempt, after the
    halt is stored; a failed delivery never undoes the halt."""
    record_id = await make_record(writer, user, source="telegram", tg_chat_id=1,
                                  tg_message_id=1)
    halted_when_sent: list[bool] = []

    async def watch(sent: Sent) -> None:
        row = await state_of(readers, record_id)
        halted_when_sent.append(row["halted_at"] is not None)

    recording = RecordingNotifier(
        fail_with="bot_not_running" if delivery == "undelivered" else None,
        crash=delivery == "door_broken", before_send=watch)
    if reason is HaltReason.STEP_FAILED:
        steps["normalize"].then(Behaviour(fail="permanent"))
    elif reason is HaltReason.STUCK:
        clock.advance(settings.pipeline.own_work_limit_minutes * 60 + 1)
    else:
        for _ in range(settings.pipeline.attempts_limit):
            await claim_ok(writer, settings)
            clock.advance(settings.pipeline.lease_seconds)
    actor = make_actor(notifier=NullNotifier() if delivery == "no_bot" else recording)
    assert (await actor.run_once()).outcome == "halted"
    assert (await actor.run_once()).outcome == "empty"  # halted: never claimed again
    clock.advance(timedelta(days=2).total_seconds())
    assert (await actor.run_once()).outcome == "empty"
    row = await state_of(readers, record_id)
    assert row["halt_reason"] == reason.value
    expected_attempts = 0 if delivery == "no_bot" else 1
    assert len(recording.notices(record_id)) == expected_attempts
    assert halted_when_sent == [True] * expected_attempts
    assert isinstance(await claim(writer, settings), NoWork)
