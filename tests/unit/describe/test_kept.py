"""Descriptions people keep (issue 38): topics for short and Russian records, the
owner's topic found in any of its word forms, and a title that is a title — none
rather than a copy of the message."""

from __future__ import annotations

from collections.abc import Sequence

from tests.helpers.meetings import MEETING_EN, MEETING_RU, VOICE_EN, VOICE_RU, utterances
from transcriber.domain.describe import Description, copies, fitted
from transcriber.ports import Material, Utterance
from transcriber.providers.describe.extractive import ExtractiveDescriber


def _said(*texts: str, seconds: int = 5) -> list[Utterance]:
    step = seconds * 1000 // len(texts)
    return [Utterance(start_ms=at * step, end_ms=(at + 1) * step, channel=0, text=text)
            for at, text in enumerate(texts)]


async def _describe(said: Sequence[Utterance], topics: tuple[str, ...] = ()) -> Description:
    return await ExtractiveDescriber().describe(Material(
        record_id="r1", language="", duration_ms=said[-1].end_ms, utterances=tuple(said),
        owner_topics=topics, archive=None))


async def test_a_short_russian_message_gets_a_topic_of_what_it_is_about() -> None:
    once = await _describe(_said(VOICE_RU))
    assert once.topics == ("распознавание русской речи",)
    # Said three times over in one recording: the same subject, not its greeting.
    thrice = await _describe(_said(VOICE_RU, VOICE_RU, VOICE_RU, seconds=15))
    assert thrice.topics == ("распознавание русской речи",)


async def test_a_short_message_names_its_subject_and_no_time_or_greeting_word() -> None:
    described = await _describe(_said("Завтра встреча по бюджету отдела продаж."))
    assert described.topics == ("бюджету отдела продаж",)
    described = await _describe(_said("Hi Anna, please call me back about the invoice."))
    assert described.topics == ("invoice",)
    described = await _describe(_said(
        "Hi Anna, please call me back about the invoice for the Moscow office."))
    assert described.topics == ("Moscow office",)  # a name keeps its capital
    described = await _describe(_said("Office move: the office move is on Friday."))
    assert described.topics == ("office move",)  # capital only where a sentence opens
    described = await _describe(_said("Ok, thanks, bye."))
    assert described.topics == ()


async def test_an_owner_topic_is_found_in_any_of_its_word_forms() -> None:
    english = _said("We talked about finance today.", "Finance is hard this month.",
                    "Our finances are fine though.", seconds=9)
    assert (await _describe(english, ("Finance", "Travel"))).topics == ("Finance",)
    assert (await _describe(english, ("finance",))).topics == ("finance",)
    russian = _said("Поговорим о финансах.", "Финансов мало, финансы надо считать.",
                    seconds=9)
    assert (await _describe(russian, ("Финансы", "Отпуск"))).topics == ("Финансы",)


async def test_a_meeting_keeps_its_owner_topics_and_key_phrases() -> None:
    described = await _describe(utterances(MEETING_RU), ("Переезд", "Отпуск"))
    assert described.topics == ("Переезд",)
    assert "mobile app" in (await _describe(utterances(MEETING_EN))).topics


async def test_no_title_for_a_message_shorter_than_a_title() -> None:
    described = await _describe(_said(VOICE_RU))
    assert described.title == ""
    assert described.brief == VOICE_RU  # the message is its own brief: shown once
    assert (await _describe(_said("Hello, this is a test."))).title == ""


async def test_no_title_when_the_only_candidate_is_the_whole_text() -> None:
    text = ("The contractor says the new windows for the office will arrive only "
            "in the second half of March")
    assert len(text) > 80
    described = await _describe(_said(text))
    assert described.title != ""  # a part of it, not a copy
    assert described.title != text
    assert len(described.title.split()) <= 10


async def test_no_title_when_the_phrase_holds_every_word_said() -> None:
    shouted = "Budget review for the second quarter of the year" + "!" * 40
    assert (await _describe(_said(shouted))).title == ""


async def test_a_title_is_a_short_phrase_not_a_whole_sentence() -> None:
    english = await _describe(utterances(MEETING_EN))
    assert english.title == "The release of the mobile app is next Tuesday"
    russian = await _describe(utterances(MEETING_RU))
    assert russian.title == "Переезд офиса на выходных двадцать пятого"
    voice = await _describe(_said(VOICE_EN))
    assert voice.title == "The quick brown fox jumps over the lazy dog"


def test_no_describer_titles_a_message_with_a_copy_of_it() -> None:
    said = "Привет. Сегодня мы проверяем распознавание русской речи."
    copied = fitted(title="Привет, сегодня мы проверяем распознавание русской речи!",
                    brief=said, topics=(), owner_topics=(), by="openai:model", said=said)
    assert copied.title == ""
    titled = fitted(title="Проверка распознавания речи", brief=said, topics=(),
                    owner_topics=(), by="openai:model", said=said)
    assert titled.title == "Проверка распознавания речи"  # a title of its own stays
    assert not copies("Budget", "budget " * 100)  # hours of speech are never read
