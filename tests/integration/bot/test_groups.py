"""Telegram group chats linked to a space (issue 41, docs/telegram.md "Group chats"),
against the fake Bot API over HTTP with Telegram's wire shapes (a group's id is
negative, `chat.type` `group`, commands as `/link@botname`).

Who may link and unlink, whose record each sender's audio becomes and that it goes
into the space, a group not linked told once and keeping nothing, the group's
commands answered about the space only, a linker removed from the space taking the
group's view with them, and a reply never told to a group that may not see its record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from tests.helpers.bot import (
    ALICE_ID,
    ALLOWED,
    BOB_ID,
    OGG,
    STRANGER_ID,
    DoorHarness,
    StartService,
)
from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import until
from tests.helpers.texts import T, en
from transcriber.bot.client import make_bot
from transcriber.bot.status import StatusActor
from transcriber.core.clock import SystemClock
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.spaces import CreateSpace, MoveRecord, RemoveMember, SetMember
from transcriber.db.commands.telegram import LinkGroup, UnlinkGroup, enqueue_reply
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.domain.access import AccessRole
from transcriber.domain.transcripts import Utterance, dump_structure
from transcriber.followups.reply import Outbox
from transcriber.settings import TelegramSettings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_telegram import FakeTelegram, SentMessage
from transcriber.testing.notifier import RecordingNotifier
from transcriber.web import keys

Harness = Callable[..., DoorHarness]
GROUP = -1001234567890  # a supergroup's id as Telegram gives it
BASIC_GROUP = -4012345678  # a basic group's
CAROL_ID = 333  # listed in the tests that name her, never a member of the space
BOT = "@transcriber_test_bot"


async def _answers(fake: FakeTelegram, count: int) -> list[SentMessage]:
    async with asyncio.timeout(10):
        return list(await fake.wait_sent(count))


def _say(fake: FakeTelegram, sender: int, text: str) -> None:
    fake.push_text(sender_id=sender, text=text, chat_id=GROUP)


def _voice(fake: FakeTelegram, sender: int) -> dict[str, Any]:
    _, message = fake.push_voice(sender_id=sender, file_id=fake.add_file(OGG), chat_id=GROUP)
    return message


async def _family(writer: Writer) -> str:
    """adam (web only) admin, alice (listed) editor, bob (listed) viewer; the id."""
    adam, alice, bob = [await make_user(writer, login) for login in ("adam", "alice", "bob")]
    space = await writer.ask(CreateSpace(space_name="Family", admin_id=adam.id))
    await writer.ask(SetMember(space_id=space.id, user_id=alice.id, role=AccessRole.EDITOR))
    await writer.ask(SetMember(space_id=space.id, user_id=bob.id, role=AccessRole.VIEWER))
    return space.id


async def _records(readers: ReaderPool) -> list[dict[str, Any]]:
    rows = await readers.fetch_all(
        "SELECT u.provider_login AS login, r.space_id, r.tg_chat_id FROM audio_records AS r "
        "JOIN users AS u ON u.id = r.owner_id ORDER BY r.created_at, r.id", {})
    return [dict(row) for row in rows]


async def test_an_editor_links_the_group_and_every_senders_audio_goes_to_the_space(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, readers: ReaderPool,
) -> None:
    space_id = await _family(writer)
    door_harness(allowed={**ALLOWED, str(CAROL_ID): "carol"}).start()
    # Not linked: a listed sender's audio is refused once (the bot does not nag), a
    # stranger's is ignored, and nothing is kept.
    assert _voice(fake_tg, ALICE_ID)["chat"]["type"] == "supergroup"
    _voice(fake_tg, ALICE_ID)
    _voice(fake_tg, STRANGER_ID)
    _say(fake_tg, BOB_ID, "/link Family")  # a viewer files nothing into the space
    _say(fake_tg, STRANGER_ID, "/link Family")  # not a listed sender
    _say(fake_tg, ALICE_ID, f"/link{BOT} Nope")
    _say(fake_tg, ALICE_ID, f"/link{BOT} Family")
    answers = await _answers(fake_tg, 5)
    assert [a.text for a in answers] == [
        en(T.GROUP_NOT_LINKED), en(T.LINK_FORBIDDEN), en(T.LINK_NOT_ALLOWED),
        en(T.LINK_NO_SPACE), en(T.LINKED, space="Family")]
    assert all(a.chat_id == GROUP for a in answers)
    assert await _records(readers) == []

    # Linked: the sender's record when they may file into the space, else the linker's.
    for sender in (ALICE_ID, STRANGER_ID, BOB_ID):
        _voice(fake_tg, sender)
    assert [a.text for a in (await _answers(fake_tg, 8))[5:]] == [en(T.ACCEPTED)] * 3
    assert await _records(readers) == [
        {"login": login, "space_id": space_id, "tg_chat_id": GROUP}
        for login in ("alice", "alice", "alice")]

    # The group's commands are about the space, never a sender's own records.
    mine = await make_user(writer, "bob")
    await make_record(writer, mine)  # bob's own, outside the space: never listed here
    _say(fake_tg, BOB_ID, f"/status{BOT}")
    _say(fake_tg, BOB_ID, "/last")
    _say(fake_tg, CAROL_ID, "/status")  # listed, but no member of the space
    _say(fake_tg, CAROL_ID, "/ask what")
    status, last, carols, carols_ask = (await _answers(fake_tg, 12))[8:]
    lines = (status.text or "").split("\n")
    assert lines[0] == en(T.GROUP_STATUS_HEADER, space="Family")
    assert len(lines) == 4
    assert last.text == en(T.GROUP_PRIVATE_ONLY)
    assert carols.text == carols_ask.text == en(T.GROUP_MEMBERS_ONLY, space="Family")

    # A viewer may not unlink; the linker may; then the group keeps nothing again.
    _say(fake_tg, BOB_ID, "/unlink")
    _say(fake_tg, ALICE_ID, f"/unlink{BOT}")
    _voice(fake_tg, ALICE_ID)
    assert [a.text for a in (await _answers(fake_tg, 15))[12:]] == [
        en(T.UNLINK_FORBIDDEN), en(T.UNLINKED), en(T.GROUP_NOT_LINKED)]
    assert len(await _records(readers)) == 4


async def test_a_linker_removed_from_the_space_takes_the_groups_view_along(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, readers: ReaderPool,
) -> None:
    space_id = await _family(writer)
    alice = await make_user(writer, "alice")
    adam = await make_user(writer, "adam")
    door_harness().start()
    _say(fake_tg, ALICE_ID, "/link Family")
    _voice(fake_tg, BOB_ID)
    assert [a.text for a in await _answers(fake_tg, 2)] == [
        en(T.LINKED, space="Family"), en(T.ACCEPTED)]
    await writer.ask(RemoveMember(space_id=space_id, user_id=alice.id, actor_id=adam.id))
    # The records alice owns leave the space with her; the link lapses.
    assert await _records(readers) == [{"login": "alice", "space_id": None,
                                        "tg_chat_id": GROUP}]
    _voice(fake_tg, BOB_ID)
    _voice(fake_tg, ALICE_ID)
    _say(fake_tg, BOB_ID, "/status")
    assert [a.text for a in (await _answers(fake_tg, 4))[2:]] == [
        en(T.GROUP_NOT_LINKED), en(T.GROUP_NOT_LINKED)]
    assert len(await _records(readers)) == 1


async def test_ask_in_a_group_answers_from_its_space_only(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, clock: FakeClock,
) -> None:
    space_id = await _family(writer)
    alice = await make_user(writer, "alice")
    door_harness().start()
    _say(fake_tg, ALICE_ID, "/link Family")
    await _answers(fake_tg, 1)
    for title, said, space in (("Закупки", "Поставщик бумаги поднял цены.", space_id),
                               ("Личное", "Поставщик Зефир дороже.", None)):
        clock.advance(1.0)
        record_id = await make_record(writer, alice)
        await writer.ask(_Said(record_id=record_id, text=said, title=title))
        if space is not None:
            await writer.ask(MoveRecord(record_id=record_id, space_id=space, actor_id=alice.id))
    _say(fake_tg, ALICE_ID, "/ask поставщик")
    fake_tg.push_text(sender_id=ALICE_ID, text="/ask поставщик")  # the private chat
    in_group, in_private = (await _answers(fake_tg, 3))[1:]
    assert in_group.chat_id == GROUP
    assert "Закупки" in (in_group.text or "")
    assert "Зефир" not in (in_group.text or "")  # alice's own, outside the space
    assert in_private.chat_id == ALICE_ID
    assert "Зефир" in (in_private.text or "")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Said(Command[None]):
    """A record done with one timed line (what the pipeline leaves behind)."""

    name: ClassVar[str] = "test_group_said"
    record_id: str
    text: str
    title: str

    async def execute(self, ctx: WriteContext) -> None:
        said = [Utterance(start_ms=0, end_ms=3000, channel=0, text=self.text)]
        await ctx.conn.execute(q.results.UPSERT_STRUCTURE, {
            "id": new_id(), "record_id": self.record_id, "version": 1,
            "contents": dump_structure(said), "now": ctx.now()})
        text_id = new_id()
        await ctx.conn.execute(
            "INSERT INTO texts (id, record_id, kind, contents, created_at, updated_at) "
            "VALUES (:id, :record_id, 'transcript', :text, :now, :now)",
            {"id": text_id, "record_id": self.record_id, "text": self.text, "now": ctx.now()})
        await ctx.conn.execute(
            "UPDATE audio_records SET state = 'done', transcript_text_id = :t, title = :title "
            "WHERE id = :id", {"t": text_id, "id": self.record_id, "title": self.title})


@dataclass(frozen=True, slots=True, kw_only=True)
class _Done(Command[None]):
    """The outbox row `done` writes for a Telegram record."""

    name: ClassVar[str] = "test_group_reply"
    record_id: str

    async def execute(self, ctx: WriteContext) -> None:
        await enqueue_reply(ctx, record_id=self.record_id, kind="transcript")


async def test_a_group_is_never_told_about_a_record_it_may_not_see(
    writer: Writer, readers: ReaderPool,
) -> None:
    space_id = await _family(writer)
    alice = await make_user(writer, "alice")
    await writer.ask(LinkGroup(chat_id=GROUP, space_id=space_id, linked_by=alice.id))
    notifier = RecordingNotifier()
    outbox = Outbox(writer=writer, readers=readers, clock=SystemClock(),
                    notifier=lambda: notifier, settings=TelegramSettings())

    messages = iter(range(100, 200))

    async def told(*, move_out: bool = False, unlink: bool = False) -> str:
        record_id = await make_record(writer, alice, source="telegram", tg_chat_id=GROUP,
                                      tg_message_id=next(messages))
        await writer.ask(MoveRecord(record_id=record_id, space_id=space_id,
                                    actor_id=alice.id))
        await writer.ask(_Done(record_id=record_id))
        if move_out:
            await writer.ask(MoveRecord(record_id=record_id, space_id=None,
                                        actor_id=alice.id))
        if unlink:
            await writer.ask(UnlinkGroup(chat_id=GROUP))
        await outbox.deliver_chat(GROUP)
        [row] = await readers.fetch_all(q.telegram.OUTBOX_OF_RECORD, {"record_id": record_id})
        return f"{row['state']}:{row['end_reason']}"

    assert await told() == "sent:None"
    assert [s.address.tg_chat_id for s in notifier.sent] == [GROUP]
    assert await told(move_out=True) == "ended:not_visible"
    assert await told(unlink=True) == "ended:not_visible"
    assert len(notifier.attempts) == 1


async def test_a_group_stops_seeing_the_status_of_a_record_moved_out_of_its_space(
    door_harness: Harness, fake_tg: FakeTelegram, writer: Writer, readers: ReaderPool,
    clock: FakeClock,
) -> None:
    await _family(writer)
    harness = door_harness()
    harness.start()
    _say(fake_tg, ALICE_ID, "/link Family")
    _voice(fake_tg, ALICE_ID)
    assert [a.text for a in await _answers(fake_tg, 2)] == [
        en(T.LINKED, space="Family"), en(T.ACCEPTED)]
    [record] = await readers.fetch_all("SELECT id, owner_id FROM audio_records", {})

    async def followed() -> bool:  # the door notes the status message after its answer
        return await readers.fetch_one("SELECT live FROM telegram_status WHERE record_id = :id",
                                       {"id": record["id"]}) is not None

    await until(followed)
    bot = make_bot(harness.settings.telegram)
    actor = StatusActor(bot, settings=harness.settings.telegram, readers=readers,
                        writer=writer, clock=clock)
    try:
        await writer.ask(_Stage(record_id=record["id"], state="normalized"))
        await actor.round()
        assert [e.chat_id for e in fake_tg.edits] == [GROUP]  # in the space: followed
        await writer.ask(MoveRecord(record_id=record["id"], space_id=None,
                                    actor_id=record["owner_id"]))
        await writer.ask(_Stage(record_id=record["id"], state="done"))
        clock.advance(10.0)
        await actor.round()
    finally:
        await bot.session.close()
    assert len(fake_tg.edits) == 1  # moved out: the group hears nothing more of it
    live = await readers.fetch_one("SELECT live FROM telegram_status WHERE record_id = :id",
                                   {"id": record["id"]})
    assert live is not None
    assert live["live"] == 0


@dataclass(frozen=True, slots=True, kw_only=True)
class _Stage(Command[None]):
    """A record moved on by the pipeline (its stage only)."""

    name: ClassVar[str] = "test_group_stage"
    record_id: str
    state: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute("UPDATE audio_records SET state = :state WHERE id = :id",
                               {"state": self.state, "id": self.record_id})


async def test_a_linked_groups_voice_message_is_answered_in_the_group(
    start_service: StartService, fake_tg: FakeTelegram,
) -> None:
    """The whole service: linked, a voice message in the group is transcribed and the
    transcript replies to it in the group."""
    client = await start_service()
    space_id = await _family(client.app[keys.WRITER])
    fake_tg.push_text(sender_id=ALICE_ID, text=f"/link{BOT} Family", chat_id=BASIC_GROUP)
    await _answers(fake_tg, 1)
    _, message = fake_tg.push_voice(sender_id=BOB_ID, file_id=fake_tg.add_file(OGG),
                                    chat_id=BASIC_GROUP)
    await _answers(fake_tg, 3)
    ack, reply = fake_tg.sent[1:3]
    assert ack.text == en(T.ACCEPTED)
    assert message["chat"]["type"] == "group"
    assert (reply.chat_id, reply.reply_to) == (BASIC_GROUP, message["message_id"])
    assert reply.text == "hello from the fake recognizer"  # what the fake recognizer hears
    readers = client.app[keys.READERS]

    async def filed() -> bool:
        return await _records(readers) == [{"login": "alice", "space_id": space_id,
                                            "tg_chat_id": BASIC_GROUP}]

    await until(filed)
