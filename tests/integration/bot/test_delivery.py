"""The whole service with the bot: a voice message goes through the pipeline and the
transcript comes back in the chat (P6, P10 on the Telegram side)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.helpers.bot import ALICE_ID, OGG, Client, StartService
from tests.helpers.pipeline import sample, until
from tests.helpers.texts import T, en
from transcriber.bot import texts
from transcriber.bot.notifier import TelegramNotifier
from transcriber.core.errors import PermanentFailure
from transcriber.domain.stages import HaltReason
from transcriber.testing.fake_telegram import FakeTelegram, SentMessage
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

TRANSCRIPT = "hello from the fake recognizer"  # what the fake recognizer hears


async def _record(client: Client) -> dict[str, Any]:
    rows = await client.app[keys.READERS].fetch_all(
        "SELECT r.id, r.state, r.halted_at, r.halt_reason, r.source, r.tg_chat_id, "
        "r.tg_message_id, u.provider_login AS login FROM audio_records r "
        "JOIN users u ON u.id = r.owner_id", {})
    [row] = rows
    return dict(row)


async def _sent(fake: FakeTelegram, count: int) -> list[SentMessage]:
    async with asyncio.timeout(15):
        return list(await fake.wait_sent(count))


async def test_voice_message_is_transcribed_and_answered_in_reply_to_the_original(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    client = await start_service()
    assert isinstance(client.app[keys.NOTIFIER], TelegramNotifier)
    _, message = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    ack, reply = await _sent(fake_tg, 2)
    assert ack.text == en(T.ACCEPTED)
    assert reply.text == TRANSCRIPT
    assert (reply.chat_id, reply.reply_to) == (ALICE_ID, message["message_id"])
    record = await _record(client)
    assert record["state"] == "done"
    assert (record["source"], record["login"]) == ("telegram", "alice")
    assert (record["tg_chat_id"], record["tg_message_id"]) == (ALICE_ID, message["message_id"])
    assert not client.app[keys.FATAL].done()


async def test_p10_a_halt_sends_exactly_one_failure_notice(
    start_service: StartService, fake_tg: FakeTelegram, transcoder: FakeTranscoder,
) -> None:
    transcoder.normalize_failure = PermanentFailure("ffmpeg cannot decode the input")
    client = await start_service()
    _, message = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    ack, notice = await _sent(fake_tg, 2)
    assert ack.text == en(T.ACCEPTED)
    assert notice.text == texts.halt_notice("en", HaltReason.STEP_FAILED)
    assert notice.reply_to == message["message_id"]
    record = await _record(client)
    assert (record["state"], record["halt_reason"]) == ("uploaded", "step_failed")
    # The halted record is never claimed again, so nothing more is said.
    await asyncio.sleep(0.3)
    assert len(fake_tg.sent) == 2


async def _outbox(client: Client) -> list[dict[str, Any]]:
    rows = await client.app[keys.READERS].fetch_all(
        "SELECT kind, state, attempts, tg_message_id, end_reason FROM telegram_outbox", {})
    return [dict(row) for row in rows]


async def _all_sent(client: Client) -> bool:
    return all(row["state"] == "sent" for row in await _outbox(client))


async def test_telegram_down_when_replying_keeps_the_reply_pending_until_it_is_back(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    """The record is done and the step did not fail; the outbox row waits and is
    tried again with backoff; once Telegram answers the reply arrives exactly once."""
    def down_after_the_ack(method: str, params: dict[str, Any]) -> bool:
        return method == "sendMessage" and params.get("text") != en(T.ACCEPTED)

    fake_tg.drop_if = down_after_the_ack
    failures = sample("transcriber_worker_runs_total",
                      {"stage": "transcribed", "outcome": "failure"})
    client = await start_service(send_attempts=2, delivery_poll_seconds=0.05)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))

    def tries() -> int:
        return len([p for m, p in fake_tg.calls if m == "sendMessage" and p["text"] == TRANSCRIPT])

    await until(lambda: tries() >= 4)  # the step's own send and at least one outbox retry
    record = await _record(client)
    assert (record["state"], record["halted_at"]) == ("done", None)
    [row] = await _outbox(client)
    assert (row["kind"], row["state"]) == ("transcript", "pending")
    assert [m.text for m in fake_tg.sent] == [en(T.ACCEPTED)]
    fake_tg.drop_if = None
    _, reply = await _sent(fake_tg, 2)
    assert reply.text == TRANSCRIPT
    await until(lambda: _all_sent(client))
    [row] = await _outbox(client)
    assert (row["state"], row["tg_message_id"]) == ("sent", reply.message_id)
    await asyncio.sleep(0.3)
    assert [m.text for m in fake_tg.sent] == [en(T.ACCEPTED), TRANSCRIPT]
    assert sample("transcriber_worker_runs_total",
                  {"stage": "transcribed", "outcome": "failure"}) == failures
    assert not client.app[keys.FATAL].done()


async def test_a_blocked_bot_ends_the_reply_with_its_reason_and_counts_it(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    before = sample("transcriber_replies_undelivered_total", {"reason": "blocked"})
    client = await start_service(delivery_poll_seconds=0.05)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    await _sent(fake_tg, 1)
    fake_tg.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await until(lambda: sample("transcriber_replies_undelivered_total",
                               {"reason": "blocked"}) == before + 1)
    [row] = await _outbox(client)
    assert (row["state"], row["end_reason"]) == ("ended", "blocked")
    await asyncio.sleep(0.3)
    assert len(fake_tg.sent) == 1  # not tried again


async def test_a_reply_failing_past_the_delivery_window_ends_as_window_passed(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    before = sample("transcriber_replies_undelivered_total", {"reason": "window_passed"})
    fake_tg.drop_if = lambda method, params: (method == "sendMessage"
                                              and params.get("text") == TRANSCRIPT)
    # A window of under a second: the first retry after it ends the row.
    client = await start_service(send_attempts=1, delivery_window_hours=0.0002,
                                 delivery_poll_seconds=0.05)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    await until(lambda: sample("transcriber_replies_undelivered_total",
                               {"reason": "window_passed"}) == before + 1, within=15)
    [row] = await _outbox(client)
    assert (row["state"], row["end_reason"]) == ("ended", "window_passed")
    # Tried and failed first (how often depends on the machine's speed), then ended.
    tries = [p for m, p in fake_tg.calls if m == "sendMessage" and p.get("text") == TRANSCRIPT]
    assert len(tries) >= 1
    assert row["attempts"] >= 1


async def test_without_a_token_no_bot_runs_and_the_null_notifier_stays(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    client = await start_service(token=None)
    assert keys.NOTIFIER not in client.app
    await asyncio.sleep(0.1)
    assert fake_tg.calls == []


async def test_a_russian_sender_reads_russian_and_the_status_message_ends_with_the_halt(
    start_service: StartService, fake_tg: FakeTelegram, transcoder: FakeTranscoder,
) -> None:
    transcoder.normalize_failure = PermanentFailure("ffmpeg cannot decode the input")
    await start_service(status_edit_seconds=0.0, status_poll_seconds=0.05)
    _, message = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    message["from"]["language_code"] = "ru"
    ack, notice = await _sent(fake_tg, 2)
    assert ack.text == texts.say("ru", T.ACCEPTED)
    assert notice.text == texts.halt_notice("ru", HaltReason.STEP_FAILED)
    halted = texts.say("ru", T.STATUS_MESSAGE, stage=texts.say(
        "ru", T.STAGE_HALTED, why=texts.say("ru", T.HALT_STEP_FAILED)))
    await until(lambda: fake_tg.shown_text(ALICE_ID, ack.message_id) == halted)
    assert fake_tg.errors == []


async def test_the_status_message_follows_the_record_to_done_without_an_api_error(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    await start_service(status_edit_seconds=0.0, status_poll_seconds=0.05)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    ack, reply = await _sent(fake_tg, 2)
    assert reply.text == TRANSCRIPT
    done = en(T.STATUS_MESSAGE, stage=en(T.STAGE_DONE))
    await until(lambda: fake_tg.shown_text(ALICE_ID, ack.message_id) == done)
    await asyncio.sleep(0.3)
    assert fake_tg.edits[-1].text == done
    assert len([e for e in fake_tg.edits if e.text == done]) == 1
    assert fake_tg.errors == []
    assert len(fake_tg.commands) == 4
