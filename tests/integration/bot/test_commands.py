"""The bot's commands and its local Bot API mode, against the fake Bot API over HTTP:
/start and /help, /status (the last five records), /last (the latest transcript
again), /export (a transcript as a document: DOCX opened with python-docx), the menu
registered with setMyCommands in both languages, and a file
over the cloud's 20 MB read in place from a local Bot API server's disk."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from docx import Document

from tests.helpers.bot import ALICE_ID, OGG, DoorHarness
from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import until
from tests.helpers.texts import T, en
from transcriber.bot import texts
from transcriber.bot.commands import status_list
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.telegram import RecentRecord
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.domain.transcripts import STRUCTURE_ROW, Utterance, dump_structure
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_telegram import FakeTelegram, SentMessage

Harness = Callable[..., DoorHarness]


async def _answers(fake: FakeTelegram, count: int) -> list[SentMessage]:
    async with asyncio.timeout(10):
        return list(await fake.wait_sent(count))


async def _ask(fake: FakeTelegram, text: str, count: int, **sender: Any) -> SentMessage:
    _, message = fake.push_text(sender_id=ALICE_ID, text=text)
    message["from"].update(sender)
    answers = await _answers(fake, count)
    assert answers[-1].reply_to == message["message_id"]
    return answers[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class Finish(Command[None]):
    """A record done with its transcript (what the pipeline leaves behind)."""

    name: ClassVar[str] = "test_finish"
    record_id: str
    text: str
    title: str = ""

    async def execute(self, ctx: WriteContext) -> None:
        text_id = new_id()
        await ctx.conn.execute(
            "INSERT INTO texts (id, record_id, kind, contents, created_at, updated_at) "
            "VALUES (:id, :record_id, 'transcript', :text, :now, :now)",
            {"id": text_id, "record_id": self.record_id, "text": self.text, "now": ctx.now()})
        await ctx.conn.execute(
            "UPDATE audio_records SET state = 'done', transcript_text_id = :t, title = :title "
            "WHERE id = :id", {"t": text_id, "id": self.record_id, "title": self.title})


async def test_the_menu_is_registered_in_both_languages(
    door_harness: Harness, fake_tg: FakeTelegram,
) -> None:
    door_harness().start()
    await until(lambda: len(fake_tg.commands) == 4)
    names = {lang: [c["command"] for c in menu] for lang, menu in fake_tg.commands.items()}
    assert names == {"": ["start", "help", "status", "last", "ask", "export"],
                     "ru": ["start", "help", "status", "last", "ask", "export"],
                     "all_group_chats:": ["link", "unlink", "help"],
                     "all_group_chats:ru": ["link", "unlink", "help"]}
    assert fake_tg.commands["all_group_chats:ru"][0]["description"] == texts.say(
        "ru", T.COMMAND_LINK)
    assert fake_tg.commands[""][2]["description"] == en(T.COMMAND_STATUS)
    assert fake_tg.commands["ru"][2]["description"] == texts.say("ru", T.COMMAND_STATUS)


async def test_start_and_help_say_what_the_bot_does_in_the_senders_language(
    door_harness: Harness, fake_tg: FakeTelegram,
) -> None:
    door_harness().start()
    start = await _ask(fake_tg, "/start", 1)
    assert start.text == texts.help_text("en", 20 * 1024 * 1024)
    assert "20 MB" in (start.text or "")
    assert "web archive" in (start.text or "")
    russian = await _ask(fake_tg, "/help", 2, language_code="ru")
    assert russian.text == texts.help_text("ru", 20 * 1024 * 1024)
    assert "20 МБ" in (russian.text or "")
    assert "веб-архиве" in (russian.text or "")


async def _made_later(writer: Writer, owner: User, clock: FakeClock) -> str:
    clock.advance(1.0)  # created_at orders the records
    return await make_record(writer, owner)


async def test_status_lists_the_senders_last_five_records(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, clock: FakeClock,
) -> None:
    door_harness().start()
    empty = await _ask(fake_tg, "/status", 1)
    assert empty.text == en(T.STATUS_NONE)
    alice = await make_user(writer, "alice")
    other = await make_user(writer, "carol")
    await make_record(writer, other)  # someone else's: never listed
    ids = [await _made_later(writer, alice, clock) for _ in range(6)]
    await writer.ask(Finish(record_id=ids[-1], text="words", title="Standup"))
    answer = await _ask(fake_tg, "/status", 2)
    lines = (answer.text or "").split("\n")
    assert lines[0] == en(T.STATUS_HEADER)
    assert len(lines) == 6  # the header and five records, newest first
    assert lines[1] == en(T.STATUS_LINE, name="Standup", stage=en(T.STAGE_DONE))
    assert all(line.endswith(en(T.STAGE_UPLOADED)) for line in lines[2:])


async def test_last_sends_the_latest_transcript_again(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, clock: FakeClock,
) -> None:
    door_harness().start()
    none = await _ask(fake_tg, "/last", 1, language_code="uk")
    assert none.text == texts.say("ru", T.LAST_NONE)
    alice = await make_user(writer, "alice")
    older, newer, _unfinished = [await _made_later(writer, alice, clock) for _ in range(3)]
    await writer.ask(Finish(record_id=older, text="the older words"))
    await writer.ask(Finish(record_id=newer, text="the newer words"))
    again = await _ask(fake_tg, "/last", 2)
    assert again.text == "the newer words"


@dataclass(frozen=True, slots=True, kw_only=True)
class Said(Command[None]):
    """The record's timed utterances (what the poll step stores beside the text)."""

    name: ClassVar[str] = "test_said"
    record_id: str
    lines: tuple[str, ...]

    async def execute(self, ctx: WriteContext) -> None:
        said = [Utterance(start_ms=n * 4000, end_ms=n * 4000 + 3000, channel=0, text=text)
                for n, text in enumerate(self.lines)]
        await ctx.conn.execute(q.results.UPSERT_STRUCTURE, {
            "id": new_id(), "record_id": self.record_id, "version": 1,
            "contents": dump_structure(said), "now": ctx.now()})


async def test_ask_answers_from_the_senders_records_with_the_moment(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, clock: FakeClock,
) -> None:
    door_harness().start()
    empty = await _ask(fake_tg, "/ask", 1)
    assert empty.text == en(T.ASK_EMPTY)
    alice = await make_user(writer, "alice")
    carol = await make_user(writer, "carol")
    lines = ("Good morning.", "Поставщик бумаги поднял цены на восемь процентов.")
    mine = await _made_later(writer, alice, clock)
    theirs = await _made_later(writer, carol, clock)
    for record_id, said in ((mine, lines), (theirs, ("Поставщик Зефир дороже.",))):
        await writer.ask(Said(record_id=record_id, lines=said))
        await writer.ask(Finish(record_id=record_id, text=" ".join(said), title="Закупки"))
    answer = await _ask(fake_tg, "/ask На сколько поставщик поднял цены?", 2,
                        language_code="ru")
    text = answer.text or ""
    assert text.startswith("[1] Закупки, ")
    assert "0:00:04: «Поставщик бумаги поднял цены на восемь процентов.»" in text
    assert "Зефир" not in text
    none = await _ask(fake_tg, "/ask квантовый телепорт", 3)
    assert none.text == en(T.ASK_NONE)


async def test_local_mode_reads_a_file_over_20_mb_in_place(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, tmp_path: Path,
) -> None:
    fake_tg.local_dir = tmp_path / "telegram-bot-api"
    big = OGG + bytes(21 * 1024 * 1024)
    file_id = fake_tg.add_file(big)
    local_path = Path(fake_tg.files[file_id].file_path)
    assert local_path.is_absolute()  # the server keeps the file on its own disk
    downloads: list[str] = []

    async def seen(method: str, params: dict[str, Any]) -> None:
        if method == "file":
            downloads.append(params["path"])

    fake_tg.before_call = seen
    harness = door_harness(local_mode=True, local_files_dir=fake_tg.local_dir)
    assert harness.settings.telegram.download_limit == 2 * 1024 ** 3
    harness.start()
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=file_id)
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.ACCEPTED)
    row = await readers.fetch_one("SELECT size_bytes FROM audio_records", {})
    assert row is not None
    assert row["size_bytes"] == len(big)
    assert downloads == []  # nothing came over HTTP


async def test_without_local_mode_a_file_over_20_mb_is_refused(
    door_harness: Harness, fake_tg: FakeTelegram,
) -> None:
    file_id = fake_tg.add_file(OGG, declared_size=21 * 1024 * 1024)
    door_harness().start()
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=file_id)
    [answer] = await _answers(fake_tg, 1)
    assert answer.text == texts.too_large("en", 20 * 1024 * 1024)


def test_status_shows_the_progress_of_a_record_on_its_way() -> None:
    @dataclass(frozen=True)
    class Shown:
        fraction: float
        eta_seconds: float | None
        stage: str = "queue"

    records = [RecentRecord(id="r1", title="Lecture", original_filename="", state="normalized",
                            halted_at=None, halt_reason=None, created_at="2026-01-01T00:00:00Z"),
               RecentRecord(id="r2", title="Call", original_filename="", state="done",
                            halted_at=None, halt_reason=None, created_at="2026-01-01T00:00:00Z")]
    text = status_list("en", records, {"r1": Shown(fraction=0.25, eta_seconds=120)})
    lines = text.split("\n")
    assert lines[1] == en(T.STATUS_LINE, name="Lecture", stage=en(
        T.PROGRESS_ETA, stage=en(T.STAGE_NORMALIZED), percent=25, eta=en(T.MINUTES, n="2")))
    assert lines[2] == en(T.STATUS_LINE, name="Call", stage=en(T.STAGE_DONE))


@dataclass(frozen=True, slots=True, kw_only=True)
class Structured(Command[None]):
    """The recognizer's structure of a finished record (what the pipeline stores)."""

    name: ClassVar[str] = "test_structured"
    record_id: str
    utterances: tuple[Utterance, ...]

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(
            "INSERT INTO structures (id, record_id, version, contents, created_at, updated_at) "
            "VALUES (:id, :record_id, :version, :contents, :now, :now)",
            {"id": new_id(), "record_id": self.record_id, "version": STRUCTURE_ROW,
             "contents": dump_structure(self.utterances), "now": ctx.now()})


async def test_export_sends_the_transcript_as_the_document_asked_for(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, clock: FakeClock,
) -> None:
    door_harness().start()
    alice = await make_user(writer, "alice")
    older, newer = [await _made_later(writer, alice, clock) for _ in range(2)]
    spoken = (Utterance(start_ms=0, end_ms=2000, channel=0, text="Первая фраза."),
              Utterance(start_ms=2000, end_ms=4000, channel=0, text="The second one."))
    for record_id in (older, newer):
        await writer.ask(Finish(record_id=record_id, text="words", title="Standup"))
        await writer.ask(Structured(record_id=record_id, utterances=spoken))
    docx = await _ask(fake_tg, "/export docx", 1)
    assert docx.method == "sendDocument"
    assert docx.document_name == f"transcript-{newer}.docx"
    opened = Document(io.BytesIO(docx.document or b""))
    text = "\n".join(p.text for p in opened.paragraphs)
    assert "Standup" in text
    assert "Первая фраза." in text
    assert "The second one." in text
    md = await _ask(fake_tg, f"/export MD {older}", 2, language_code="ru")
    assert md.document_name == f"transcript-{older}.md"
    assert "# Standup" in (md.document or b"").decode()
    srt = await _ask(fake_tg, "/export srt", 3)
    assert "00:00:02,000 --> 00:00:04,000" in (srt.document or b"").decode()


async def test_export_says_why_it_sends_nothing_in_the_senders_language(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, clock: FakeClock,
) -> None:
    door_harness().start()
    usage = await _ask(fake_tg, "/export pdf", 1, language_code="ru")
    assert usage.text == texts.say("ru", T.EXPORT_USAGE)
    nothing = await _ask(fake_tg, "/export docx", 2)
    assert nothing.text == en(T.LAST_NONE)
    alice = await make_user(writer, "alice")
    carol = await make_user(writer, "carol")
    theirs = await _made_later(writer, carol, clock)
    await writer.ask(Finish(record_id=theirs, text="not yours"))
    stranger = await _ask(fake_tg, f"/export txt {theirs}", 3)
    assert stranger.text == en(T.EXPORT_NONE)
    unfinished = await _made_later(writer, alice, clock)
    waiting = await _ask(fake_tg, f"/export txt {unfinished}", 4)
    assert waiting.text == en(T.EXPORT_NOT_READY)
