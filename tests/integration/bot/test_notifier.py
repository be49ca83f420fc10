"""The Telegram notifier: replies to the original message, long transcripts as a .txt
document, bounded retries, and failures the delivery helper can count (P6)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from tests.helpers.pipeline import until
from tests.helpers.texts import T, en
from transcriber.bot import rules, texts
from transcriber.bot.client import make_bot
from transcriber.bot.notifier import ReplyFailed, TelegramNotifier
from transcriber.domain.quality import Quality
from transcriber.domain.stages import HaltReason
from transcriber.ports import ReplyAddress, Span, Undelivered
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_telegram import FakeTelegram

CHAT = 4242
ADDRESS = ReplyAddress(record_id="01m8pahd2ce5wda09w224hh39k", source="telegram",
                       tg_chat_id=CHAT, tg_message_id=77)


@pytest.fixture
async def notifier(tg_settings: Callable[..., Settings], clock: FakeClock
                   ) -> AsyncIterator[TelegramNotifier]:
    settings = tg_settings(send_attempts=3).telegram
    bot = make_bot(settings)
    yield TelegramNotifier(bot, settings=settings, clock=clock)
    await bot.session.close()


async def test_a_transcript_that_fits_is_one_message_replying_to_the_original(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    text = "Привет! " * 300  # Cyrillic: one UTF-16 unit per letter, 2400 units
    await notifier.send_transcript(ADDRESS, text)
    [sent] = fake_tg.sent
    assert (sent.method, sent.chat_id, sent.reply_to) == ("sendMessage", CHAT, 77)
    assert sent.text == text.strip()


async def test_a_long_transcript_is_sent_as_a_text_file(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    # 2100 emoji are 4200 UTF-16 units: over Telegram's 4096 though only 2100 characters.
    text = "🎙" * 2100
    assert not rules.fits_in_message(text)
    await notifier.send_transcript(ADDRESS, text)
    [sent] = fake_tg.sent
    assert (sent.method, sent.chat_id, sent.reply_to) == ("sendDocument", CHAT, 77)
    assert sent.document_name == f"transcript-{ADDRESS.record_id}.txt"
    assert sent.document == text.encode("utf-8")
    assert sent.caption == en(T.TRANSCRIPT_AS_FILE, chars=2100)


async def test_an_empty_transcript_says_no_speech_was_found(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    await notifier.send_transcript(ADDRESS, "  \n")
    assert [m.text for m in fake_tg.sent] == [en(T.EMPTY_TRANSCRIPT)]


async def test_halt_notice_names_the_reason_and_replies_to_the_original(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    await notifier.send_halt_notice(ADDRESS, HaltReason.STUCK)
    [sent] = fake_tg.sent
    assert sent.text == texts.halt_notice("en", HaltReason.STUCK)
    assert sent.reply_to == 77


async def test_rate_limit_and_server_errors_are_retried_on_the_clock(
    notifier: TelegramNotifier, fake_tg: FakeTelegram, clock: FakeClock,
) -> None:
    fake_tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 3", retry_after=3)
    fake_tg.fail_next("sendMessage", 500)
    sending = asyncio.create_task(notifier.send_transcript(ADDRESS, "short"))
    await until(lambda: clock.sleepers == 1)
    clock.advance(3)  # Telegram's retry_after
    await until(lambda: clock.sleepers == 1)
    clock.advance(2)  # base · 2^1 after the second failure
    await sending
    assert [m.text for m in fake_tg.sent] == ["short"]


async def test_telegram_down_ends_in_reply_failed_after_the_attempts(
    notifier: TelegramNotifier, fake_tg: FakeTelegram, clock: FakeClock,
) -> None:
    fake_tg.down = True
    sending = asyncio.create_task(notifier.send_halt_notice(ADDRESS, HaltReason.STEP_FAILED))
    for seconds in (1, 2):
        await until(lambda: clock.sleepers == 1)
        clock.advance(seconds)
    with pytest.raises(ReplyFailed):
        await sending
    assert len([c for c in fake_tg.calls if c[0] == "sendMessage"]) == 3


async def test_a_refusal_is_not_retried(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    fake_tg.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user")
    with pytest.raises(Undelivered) as caught:
        await notifier.send_transcript(ADDRESS, "short")
    assert caught.value.reason == "blocked"
    assert len([c for c in fake_tg.calls if c[0] == "sendMessage"]) == 1


async def test_a_chat_telegram_does_not_know_is_chat_not_found(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    fake_tg.fail_next("sendMessage", 400, "Bad Request: chat not found")
    with pytest.raises(Undelivered) as caught:
        await notifier.send_halt_notice(ADDRESS, HaltReason.STUCK)
    assert caught.value.reason == "chat_not_found"


async def test_the_sent_message_id_is_returned_and_texts_follow_the_language(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    russian = ReplyAddress(record_id=ADDRESS.record_id, source="telegram",
                           tg_chat_id=ADDRESS.tg_chat_id, tg_message_id=ADDRESS.tg_message_id,
                           language="ru")
    message_id = await notifier.send_halt_notice(russian, HaltReason.STUCK)
    [sent] = fake_tg.sent
    assert message_id == sent.message_id
    assert sent.text == texts.halt_notice("ru", HaltReason.STUCK)
    assert "Извините" in (sent.text or "")


async def test_a_telegram_record_without_a_chat_is_chat_missing(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    broken = ReplyAddress(record_id=ADDRESS.record_id, source="telegram")
    with pytest.raises(Undelivered) as caught:
        await notifier.send_transcript(broken, "text")
    assert caught.value.reason == "chat_missing"
    assert fake_tg.calls == []


def _report(**given: object) -> Quality:
    fields: dict[str, object] = {"verdict": "check", "reasons": ("unclear_speech",),
                                 "speech_ms": 300_000, "unclear_ms": 33_000,
                                 "unclear_spans": (Span(start_ms=42_000, end_ms=60_000),
                                                   Span(start_ms=190_000, end_ms=205_000)),
                                 "repeats_removed": 0, "low_confidence_share": 0.05, **given}
    return Quality(**fields)  # type: ignore[arg-type]


async def test_a_transcript_to_check_says_where_in_one_line_in_the_senders_language(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    russian = ReplyAddress(record_id=ADDRESS.record_id, source="telegram", tg_chat_id=CHAT,
                           tg_message_id=77, language="ru")
    await notifier.send_transcript(ADDRESS, "Hello there.", quality=_report())
    await notifier.send_transcript(russian, "Привет.", quality=_report())
    await notifier.send_transcript(ADDRESS, "Fine.", quality=_report(verdict="good",
                                                                     reasons=()))
    english, in_russian, good = fake_tg.sent
    line = en(T.QUALITY_UNCLEAR, spans="0:42–1:00, 3:10–3:25")
    assert english.text == f"{line}\n\nHello there."
    assert in_russian.text == texts.say("ru", T.QUALITY_UNCLEAR,
                                        spans="0:42–1:00, 3:10–3:25") + "\n\nПривет."
    assert good.text == "Fine."


async def test_speech_that_could_not_be_made_out_is_never_a_confident_empty_reply(
    notifier: TelegramNotifier, fake_tg: FakeTelegram,
) -> None:
    await notifier.send_transcript(ADDRESS, "", quality=_report(
        verdict="poor", reasons=("no_text", "unclear_speech")))
    [sent] = fake_tg.sent
    assert sent.text == en(T.QUALITY_NO_TEXT)
    assert en(T.EMPTY_TRANSCRIPT) not in (sent.text or "")


def test_the_line_names_at_most_three_spans_and_why() -> None:
    many = tuple(Span(start_ms=k * 60_000, end_ms=k * 60_000 + 5000) for k in range(5))
    assert texts.quality_line("en", _report(unclear_spans=many)) == en(
        T.QUALITY_UNCLEAR, spans="0:00–0:05, 1:00–1:05, 2:00–2:05, …")
    assert texts.quality_line("en", _report(verdict="poor")) == en(
        T.QUALITY_POOR, spans="0:42–1:00, 3:10–3:25")
    assert texts.quality_line("en", _report(reasons=("low_confidence",),
                                            unclear_spans=())) == en(T.QUALITY_UNSURE)
    assert texts.quality_line("en", None) == ""
    assert texts.clock_time(3_725_000) == "1:02:05"
