"""The door takes audio in from allowed senders: one record per message, the sender
answered in the chat, nothing stored for anything else (docs/telegram.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from tests.helpers.bot import ALICE_ID, BOB_ID, OGG, STRANGER_ID, DoorHarness
from tests.helpers.pipeline import sample, until
from tests.helpers.texts import T, en
from transcriber.bot import texts
from transcriber.db.readers import ReaderPool
from transcriber.testing.fake_telegram import FakeTelegram, SentMessage
from transcriber.testing.transcoder import NOT_AUDIO_MARKER, FakeTranscoder

Harness = Callable[..., DoorHarness]


async def _records(readers: ReaderPool) -> list[dict[str, object]]:
    rows = await readers.fetch_all(
        "SELECT r.id, r.source, r.tg_chat_id, r.tg_message_id, r.state, r.title, "
        "r.original_filename, r.size_bytes, u.provider_login AS login "
        "FROM audio_records r JOIN users u ON u.id = r.owner_id ORDER BY r.created_at, r.id", {})
    return [dict(row) for row in rows]


async def _count(readers: ReaderPool, table: str) -> int:
    row = await readers.fetch_one(f"SELECT count(*) AS n FROM {table}", {})
    assert row is not None
    return int(row["n"])


def _files_on_disk(data_dir: Path) -> list[Path]:
    return [p for p in (data_dir / "records").rglob("*") if p.is_file()]


async def _answers(fake: FakeTelegram, count: int) -> list[SentMessage]:
    async with asyncio.timeout(10):
        return list(await fake.wait_sent(count))


def _updates(outcome: str) -> float:
    return sample("transcriber_telegram_updates_total", {"outcome": outcome})


async def test_voice_from_an_allowed_sender_becomes_a_telegram_record_of_its_owner(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
) -> None:
    file_id = fake_tg.add_file(OGG)
    update_id, message = fake_tg.push_voice(sender_id=ALICE_ID, file_id=file_id,
                                            caption="Weekly  call\nwith the team")
    before = _updates("accepted")
    run = door_harness().start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.ACCEPTED)
    assert (answer.chat_id, answer.reply_to) == (ALICE_ID, message["message_id"])
    [record] = await _records(readers)
    assert record["source"] == "telegram"
    assert (record["tg_chat_id"], record["tg_message_id"]) == (ALICE_ID, message["message_id"])
    assert record["login"] == "alice"
    assert record["state"] == "uploaded"
    assert record["title"] == "Weekly call with the team"
    assert record["original_filename"] == "voice-2026-01-01_01-23-20.ogg"
    assert record["size_bytes"] == len(OGG)
    [stored] = _files_on_disk(data_dir)
    assert stored.read_bytes() == OGG
    # The status row is written after the answer went out; the outcome is counted then.
    await until(lambda: _updates("accepted") == before + 1)
    await run.stop()
    assert fake_tg.confirmed_offset == update_id + 1


async def test_audio_and_audio_documents_are_taken_in_with_their_names(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool,
) -> None:
    fake_tg.push_audio(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG), file_name="lecture.mp3")
    fake_tg.push_document(sender_id=BOB_ID, file_id=fake_tg.add_file(OGG),
                          file_name="interview.m4a", mime_type="audio/mp4")
    # Some clients send audio as a generic binary document: the extension tells.
    fake_tg.push_document(sender_id=BOB_ID, file_id=fake_tg.add_file(OGG),
                          file_name="call.opus", mime_type="application/octet-stream")
    run = door_harness().start()
    answers = await _answers(fake_tg, 3)
    assert [a.text for a in answers] == [en(T.ACCEPTED)] * 3
    records = await _records(readers)
    assert [(r["original_filename"], r["login"]) for r in records] == [
        ("lecture.mp3", "alice"), ("interview.m4a", "bob"), ("call.opus", "bob")]
    await run.stop()


async def test_unknown_sender_is_refused_politely_and_nothing_is_stored(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
) -> None:
    file_id = fake_tg.add_file(OGG)
    update_id, message = fake_tg.push_voice(sender_id=STRANGER_ID, file_id=file_id)
    run = door_harness().start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.NOT_ALLOWED, user_id=STRANGER_ID)
    assert answer.reply_to == message["message_id"]
    assert await _count(readers, "audio_records") == 0
    assert await _count(readers, "users") == 0
    assert _files_on_disk(data_dir) == []
    assert [name for name, _ in fake_tg.calls if name == "getFile"] == []  # never downloaded
    await run.stop()
    assert fake_tg.confirmed_offset == update_id + 1


async def test_anything_but_audio_is_refused_and_nothing_is_stored(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
) -> None:
    fake_tg.push_text(sender_id=ALICE_ID, text="please transcribe my thoughts")
    fake_tg.push_document(sender_id=ALICE_ID, file_id=fake_tg.add_file(b"%PDF-1.7"),
                          file_name="minutes.pdf", mime_type="application/pdf")
    # Named like audio, but ffmpeg (here: the fake transcoder) finds no audio in it.
    fake_tg.push_audio(sender_id=ALICE_ID, file_id=fake_tg.add_file(NOT_AUDIO_MARKER + b"x"),
                       file_name="fake.mp3")
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(b""))
    run = door_harness().start()
    answers = await _answers(fake_tg, 4)
    assert [a.text for a in answers] == [en(T.NOT_AUDIO), en(T.NOT_AUDIO), en(T.NOT_READABLE),
                                         en(T.EMPTY)]
    assert await _count(readers, "audio_records") == 0
    assert await _count(readers, "files") == 0
    assert _files_on_disk(data_dir) == []
    await run.stop()


async def test_help_commands_are_answered(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool,
) -> None:
    fake_tg.push_text(sender_id=ALICE_ID, text="/start")
    run = door_harness().start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.HELP, limit="20 MB")
    assert await _count(readers, "audio_records") == 0
    await run.stop()


async def test_a_file_over_20_mb_is_refused_before_any_download(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool,
) -> None:
    big = fake_tg.add_file(OGG, declared_size=20 * 1024 * 1024 + 1)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=big)
    run = door_harness().start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.TOO_LARGE, limit="20 MB")
    assert [name for name, _ in fake_tg.calls if name == "getFile"] == []
    assert await _count(readers, "audio_records") == 0
    await run.stop()


async def test_a_file_telegram_calls_too_big_is_refused(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool,
) -> None:
    """The message did not say its size; getFile answers 400 "file is too big"."""
    big = fake_tg.add_file(OGG, declared_size=25 * 1024 * 1024)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=big, declare_size=False)
    run = door_harness().start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.TOO_LARGE, limit="20 MB")
    assert await _count(readers, "audio_records") == 0
    await run.stop()


async def test_a_download_longer_than_the_limit_is_cut_and_refused(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
) -> None:
    """A size that lies (or a local Bot API server with a lower limit set here)."""
    liar = fake_tg.add_file(OGG * 4, declared_size=100)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=liar)
    run = door_harness(download_max_bytes=len(OGG)).start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.TOO_LARGE, limit=texts.megabytes("en", len(OGG)))
    assert await _count(readers, "audio_records") == 0
    assert _files_on_disk(data_dir) == []
    await run.stop()


async def test_the_same_message_delivered_twice_makes_one_record(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
) -> None:
    _, message = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    second = fake_tg.push_message(message)
    before = _updates("repeated")
    run = door_harness().start()
    answers = await _answers(fake_tg, 2)
    assert [a.text for a in answers] == [en(T.ACCEPTED), en(T.ACCEPTED)]
    assert len(await _records(readers)) == 1
    assert len(_files_on_disk(data_dir)) == 1
    assert _updates("repeated") == before + 1
    assert [name for name, _ in fake_tg.calls].count("getFile") == 1  # not downloaded again
    await run.stop()
    assert fake_tg.confirmed_offset == second + 1


async def test_a_crash_after_storing_before_confirming_redelivers_without_duplicate(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
) -> None:
    """At-least-once intake: the record is stored, the process dies before the update
    is confirmed; Telegram delivers it again to the next run, which finds the record."""
    update_id, message = fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    harness = door_harness()
    first = harness.start()
    crashed = asyncio.Event()

    async def crash_on_the_answer(method: str, params: dict[str, object]) -> None:
        if method == "sendMessage" and not crashed.is_set():
            crashed.set()
            first.task.cancel()  # the record is stored; the next poll never happens

    fake_tg.before_call = crash_on_the_answer
    await until(first.task.done)
    await first.kill()
    assert len(await _records(readers)) == 1
    assert fake_tg.confirmed_offset < update_id + 1

    second = harness.start()
    # The answer of the first run may have reached the chat; the second run answers too.
    answers = await _answers(fake_tg, 2)
    assert [(a.text, a.reply_to) for a in answers] == [(en(T.ACCEPTED), message["message_id"])] * 2
    await second.stop()
    assert fake_tg.answered.count(update_id) == 2
    assert fake_tg.confirmed_offset == update_id + 1
    assert len(await _records(readers)) == 1
    assert len(_files_on_disk(data_dir)) == 1


async def test_too_long_or_too_coarse_audio_is_refused_with_a_clear_answer(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
    transcoder: FakeTranscoder,
) -> None:
    transcoder.duration_ms = 6 * 3600 * 1000 + 1  # one millisecond over the promised 6 h
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    run = door_harness().start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.TOO_LONG, limit="6 h")
    transcoder.duration_ms, transcoder.sample_rate = 1000, 1
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    [_, answer] = await _answers(fake_tg, 2)
    assert answer.text == en(T.SAMPLE_RATE_TOO_LOW)
    assert await _count(readers, "audio_records") == 0
    assert await _count(readers, "files") == 0
    assert _files_on_disk(data_dir) == []
    await run.stop()


async def test_too_fast_or_too_many_channels_is_refused_with_a_clear_answer(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
    transcoder: FakeTranscoder,
) -> None:
    transcoder.sample_rate = 1_048_575
    before = _updates("refused_sample_rate_too_high")
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    run = door_harness().start()
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.SAMPLE_RATE_TOO_HIGH, limit="192")
    await until(lambda: _updates("refused_sample_rate_too_high") == before + 1)
    transcoder.sample_rate, transcoder.input_channels = 48_000, 9
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    [_, answer] = await _answers(fake_tg, 2)
    assert answer.text == en(T.TOO_MANY_CHANNELS, limit=8)
    assert await _count(readers, "audio_records") == 0
    assert _files_on_disk(data_dir) == []
    await run.stop()


async def test_audio_past_the_senders_quota_is_refused_with_a_clear_answer(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
    transcoder: FakeTranscoder,
) -> None:
    transcoder.duration_ms = 40 * 60 * 1000
    run = door_harness(server={"queued_audio_max_seconds_per_user": 3600}).start()
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG))
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=fake_tg.add_file(OGG + b"2"))
    first, second = await _answers(fake_tg, 2)
    assert first.text == en(T.ACCEPTED)
    assert second.text == en(T.QUOTA_EXCEEDED, queued="40 min", limit="1 h")
    assert await _count(readers, "audio_records") == 1
    assert len(_files_on_disk(data_dir)) == 1
    fake_tg.push_voice(sender_id=BOB_ID, file_id=fake_tg.add_file(OGG + b"3"))
    [*_, bobs] = await _answers(fake_tg, 3)
    assert bobs.text == en(T.ACCEPTED)
    await run.stop()
