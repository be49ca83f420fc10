"""Pure decisions of the Telegram door."""

from __future__ import annotations

from typing import Any

import pytest
from aiogram.exceptions import TelegramNetworkError, TelegramRetryAfter
from aiogram.methods import GetUpdates
from aiogram.types import Message

from tests.helpers.texts import T, en
from transcriber.bot import rules, texts
from transcriber.db.reads.telegram import LinkedGroup
from transcriber.domain.access import AccessRole

ALLOWED = {"111": "alice"}
LIMIT = 20 * 1024 * 1024


def _message(sender: int | None = 111, *, is_bot: bool = False, group: bool = False,
             **content: Any) -> Message:
    chat = {"id": -100, "type": "supergroup", "title": "G"} if group else {"id": 111,
                                                                          "type": "private"}
    data: dict[str, Any] = {"message_id": 7, "date": 1_767_225_600, "chat": chat, **content}
    if sender is not None:
        data["from"] = {"id": sender, "is_bot": is_bot, "first_name": "S"}
    return Message.model_validate(data)


def _doc(name: str | None, mime: str | None, size: int = 10) -> dict[str, Any]:
    doc: dict[str, Any] = {"file_id": "F", "file_unique_id": "U", "file_size": size}
    if name is not None:
        doc["file_name"] = name
    if mime is not None:
        doc["mime_type"] = mime
    return doc


def _inspect(message: Message) -> rules.MessageDecision:
    return rules.inspect_message(message, allowed=ALLOWED, max_bytes=LIMIT)


def test_voice_of_an_allowed_sender_is_taken_with_a_dated_name() -> None:
    decision = _inspect(_message(voice={"file_id": "V", "file_unique_id": "U", "duration": 2,
                                        "file_size": 99}, caption=" Standup\n\tnotes "))
    assert decision == rules.TakeFile(login="alice", file_id="V",
                                      file_name="voice-2026-01-01_00-00-00.ogg",
                                      size_bytes=99, title="Standup notes")


def test_a_caption_loses_bidi_and_format_characters() -> None:
    decision = _inspect(_message(voice={"file_id": "V", "file_unique_id": "U", "duration": 2},
                                 caption="report\u202egnp.exe \u200bnotes\u2066"))
    assert isinstance(decision, rules.TakeFile)
    assert decision.title == "reportgnp.exe notes"


def test_unknown_sender_is_refused_with_their_id_whatever_they_send() -> None:
    decision = _inspect(_message(555, voice={"file_id": "V", "file_unique_id": "U",
                                             "duration": 2}))
    assert decision == rules.Refuse(reason="not_allowed",
                                    text=en(T.NOT_ALLOWED, user_id=555))


@pytest.mark.parametrize("message", [_message(None, text="x"), _message(111, is_bot=True,
                                                                         text="x")])
def test_messages_without_a_human_sender_are_ignored(message: Message) -> None:
    assert _inspect(message) == rules.Ignore()


def test_a_service_message_is_ignored() -> None:
    assert _inspect(_message(new_chat_title="renamed")) == rules.Ignore()


@pytest.mark.parametrize(("name", "mime", "taken"), [
    ("a.pdf", "application/pdf", False),
    ("a.m4a", "audio/mp4", True),
    ("a.OPUS", "application/octet-stream", True),
    (None, "audio/mpeg", True),
    ("a.mp4", "video/mp4", False),
    ("a.ogg", None, True),
])
def test_documents_are_taken_when_audio_by_type_or_extension(
    name: str | None, mime: str | None, taken: bool,
) -> None:
    decision = _inspect(_message(document=_doc(name, mime)))
    assert isinstance(decision, rules.TakeFile) is taken
    if not taken:
        assert decision == rules.Refuse(reason="not_audio", text=en(T.NOT_AUDIO))


def test_a_nameless_audio_document_gets_a_name_from_its_type() -> None:
    decision = _inspect(_message(document=_doc(None, "audio/mpeg")))
    assert isinstance(decision, rules.TakeFile)
    assert decision.file_name == "audio.mp3"


def test_audio_title_comes_from_performer_and_title_unless_captioned() -> None:
    audio = {"file_id": "A", "file_unique_id": "U", "duration": 5, "performer": "Lecturer",
             "title": "Week 3", "file_name": "w3.mp3"}
    decision = _inspect(_message(audio=audio))
    assert isinstance(decision, rules.TakeFile)
    assert (decision.file_name, decision.title) == ("w3.mp3", "Lecturer – Week 3")


def test_a_declared_size_over_the_limit_is_refused() -> None:
    decision = _inspect(_message(document=_doc("a.mp3", "audio/mpeg", size=LIMIT + 1)))
    assert decision == rules.Refuse(reason="too_large", text=texts.too_large("en", LIMIT))
    assert "20 MB" in texts.too_large("en", LIMIT)


@pytest.mark.parametrize("text", ["/start", "/help", "/start@transcriber_bot", "/help me"])
def test_help_commands_are_answered(text: str) -> None:
    assert isinstance(_inspect(_message(text=text)), rules.ChatCommand)


def test_other_text_is_refused_as_not_audio() -> None:
    assert _inspect(_message(text="hello")) == rules.Refuse(reason="not_audio",
                                                           text=en(T.NOT_AUDIO))


def test_retry_waits_grow_to_the_cap_and_retry_after_wins() -> None:
    waits = [rules.retry_seconds(n, base=1, cap=60) for n in range(1, 9)]
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60]
    method = GetUpdates()
    limited = TelegramRetryAfter(method=method, message="slow down", retry_after=9)
    assert rules.wait_before_retry(limited, 1, base=1, cap=60) == 9
    network = TelegramNetworkError(method=method, message="down")
    assert rules.wait_before_retry(network, 3, base=1, cap=60) == 4


def test_message_length_is_counted_in_utf16_units() -> None:
    assert rules.fits_in_message("a" * 4096)
    assert not rules.fits_in_message("a" * 4097)
    assert rules.fits_in_message("я" * 4096)  # Cyrillic: one unit each
    assert not rules.fits_in_message("🎙" * 2049)  # outside the BMP: two units each


def _group(linker_role: str | None = "editor") -> LinkedGroup:
    return LinkedGroup(chat_id=-100, space_id="S", space_name="Family", linked_by="U",
                       created_at="2026-01-01T00:00:00Z",
                       linker_role=None if linker_role is None else AccessRole(linker_role))


def _in_group(message: Message, group: LinkedGroup | None = None) -> rules.MessageDecision:
    return rules.inspect_message(message, allowed=ALLOWED, max_bytes=LIMIT, group=group)


def test_in_a_group_only_audio_of_listed_senders_and_commands_get_answers() -> None:
    voice = {"file_id": "V", "file_unique_id": "U", "duration": 2}
    assert _inspect(_message(group=True, text="lunch?")) == rules.Ignore()
    assert _inspect(_message(555, group=True, voice=voice)) == rules.Ignore()
    command = _inspect(_message(group=True, text="/help@transcriber_bot"))
    assert isinstance(command, rules.ChatCommand)
    assert command.text.endswith(en(T.GROUP_NOT_LINKED))


def test_a_group_not_linked_refuses_a_listed_senders_audio_and_answers_no_query() -> None:
    voice = {"file_id": "V", "file_unique_id": "U", "duration": 2}
    refused = _in_group(_message(group=True, voice=voice))
    assert refused == rules.Refuse(reason="not_linked", text=en(T.GROUP_NOT_LINKED))
    for query in ("/status", "/ask what", "/last", "/export txt"):
        assert _in_group(_message(group=True, text=query)) == rules.ChatCommand(
            text=en(T.GROUP_NOT_LINKED))
    # A link whose linker may no longer file records there is no link at all.
    for lapsed in (_group("viewer"), _group(None)):
        assert _in_group(_message(group=True, voice=voice), lapsed) == refused
        assert _in_group(_message(group=True, text="/status"), lapsed) == rules.ChatCommand(
            text=en(T.GROUP_NOT_LINKED))


def test_a_linked_group_takes_anyones_audio_and_answers_about_its_space_only() -> None:
    voice = {"file_id": "V", "file_unique_id": "U", "duration": 2}
    group = _group()
    listed = _in_group(_message(group=True, voice=voice), group)
    assert isinstance(listed, rules.TakeFile)
    assert (listed.login, listed.group) == ("alice", group)
    unlisted = _in_group(_message(555, group=True, voice=voice), group)
    assert isinstance(unlisted, rules.TakeFile)
    assert (unlisted.login, unlisted.group) == (None, group)
    status = _in_group(_message(group=True, text="/status@transcriber_test_bot"), group)
    assert status == rules.RunCommand(command="/status", login="alice", language="en",
                                      group=group)
    ask = _in_group(_message(group=True, text="/ask@transcriber_test_bot what was said"), group)
    assert isinstance(ask, rules.RunCommand)
    assert (ask.argument, ask.group) == ("what was said", group)
    for private in ("/last", "/export txt"):
        assert _in_group(_message(group=True, text=private), group) == rules.ChatCommand(
            text=en(T.GROUP_PRIVATE_ONLY))
    assert _in_group(_message(555, group=True, text="/status"), group) == rules.Ignore()
    helped = _in_group(_message(group=True, text="/help"), group)
    assert isinstance(helped, rules.ChatCommand)
    assert helped.text.endswith(en(T.GROUP_LINKED_TO, space="Family"))


def test_link_and_unlink_are_for_groups_and_heard_from_anyone_there() -> None:
    link = _in_group(_message(group=True, text="/link@transcriber_test_bot  Our family "))
    assert link == rules.GroupCommand(command="/link", login="alice", language="en",
                                      argument="Our family")
    assert _in_group(_message(555, group=True, text="/unlink")) == rules.GroupCommand(
        command="/unlink", login=None, language="en")
    assert _inspect(_message(text="/link Family")) == rules.ChatCommand(
        text=en(T.LINK_IN_PRIVATE))
