"""The extractive describer on transcripts as recognizers write them: voice messages and
meetings in English and Russian, and a 3-hour meeting."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from tests.helpers.meetings import (
    MEETING_EN,
    MEETING_RU,
    VOICE_EN,
    VOICE_RU,
    hours_of,
    utterances,
)
from transcriber.domain.describe import BRIEF_MAX, TITLE_MAX, TOPICS_MAX, Description, sentences
from transcriber.domain.search import fold
from transcriber.ports import ArchiveCounts, Material, Utterance
from transcriber.providers.describe.extractive import ExtractiveDescriber, centrality

CYRILLIC = set("абвгдежзийклмнопрстуфхцчшщъыьэюя")


class Archive:
    """An owner's archive of `records` records, each holding the stems in `everywhere`."""

    def __init__(self, records: int, everywhere: Sequence[str] = ()) -> None:
        self.records = records
        self.everywhere = set(everywhere)
        self.asked: list[str] = []

    async def counts(self, stems: Sequence[str]) -> ArchiveCounts:
        self.asked.extend(stems)
        return ArchiveCounts(records=self.records, holding={
            stem: self.records if stem in self.everywhere else 1 for stem in stems})


def _material(said: Sequence[Utterance], topics: tuple[str, ...] = (),
              archive: Archive | None = None) -> Material:
    return Material(record_id="r1", language="", duration_ms=said[-1].end_ms if said else 0,
                    utterances=tuple(said), owner_topics=topics, archive=archive)


async def _describe(said: Sequence[Utterance], **kwargs: object) -> Description:
    return await ExtractiveDescriber().describe(_material(said, **kwargs))  # type: ignore[arg-type]


def _voice(text: str) -> list[Utterance]:
    return [Utterance(start_ms=0, end_ms=5000, channel=0, text=text)]


def _words(text: str) -> set[str]:
    return {fold(word) for word in text.replace(",", " ").split()}


def _checked(description: Description) -> Description:
    assert len(description.title) <= TITLE_MAX
    assert len(description.brief) <= BRIEF_MAX
    assert 1 <= len(sentences(description.brief)) <= 3
    assert len(description.topics) <= TOPICS_MAX
    assert description.by == "extractive"
    return description


async def test_a_russian_voice_message_is_its_own_brief_with_a_topic_and_no_title() -> None:
    described = _checked(await _describe(_voice(VOICE_RU)))
    assert described.title == ""  # shorter than a title: it would only say it twice
    assert described.brief == VOICE_RU  # a message this short is its own brief
    assert described.topics == ("распознавание русской речи",)  # one topic, of its words


async def test_an_english_voice_message_is_titled_in_english() -> None:
    described = _checked(await _describe(_voice(VOICE_EN)))
    assert described.title == "The quick brown fox jumps over the lazy dog"
    assert not set(described.title.lower()) & CYRILLIC
    assert len(described.topics) == 1  # a message: one topic, said once, of its words
    assert _words(described.topics[0]) <= _words(VOICE_EN.replace(".", " "))


async def test_an_english_meeting_is_titled_by_its_subject() -> None:
    described = _checked(await _describe(utterances(MEETING_EN)))
    assert {"release", "mobile", "app"} <= _words(described.title)
    assert described.title not in described.brief  # the brief adds to the title
    assert len(sentences(described.brief)) == 2  # a few minutes: two sentences
    assert "mobile app" in described.topics
    assert "beta testing" in described.topics
    assert not "".join(described.topics).strip(" abcdefghijklmnopqrstuvwxyz")


async def test_a_russian_meeting_is_titled_by_its_subject_in_russian() -> None:
    described = _checked(await _describe(utterances(MEETING_RU)))
    assert {"переезд", "офиса"} <= _words(described.title)
    assert set(described.title.lower()) & CYRILLIC
    assert "переезд офиса" in described.topics
    assert "переезд" in described.brief


async def test_an_owner_topic_that_is_said_is_preferred_over_new_ones() -> None:
    described = _checked(await _describe(
        utterances(MEETING_EN), topics=("Release", "Android version", "Budget 2025")))
    assert described.topics == ("Release", "Android version")  # as the owner wrote them
    described = _checked(await _describe(utterances(MEETING_RU),
                                         topics=("Парковка", "Отпуск")))
    assert described.topics == ("Парковка",)


async def test_a_three_hour_meeting_is_described_like_its_hour() -> None:
    said = hours_of(MEETING_EN, 3)
    assert said[-1].end_ms > 2.9 * 3_600_000
    described = _checked(await _describe(said))
    assert {"release", "mobile", "app"} <= _words(described.title)
    assert len(sentences(described.brief)) == 3  # a long recording: three sentences
    assert {"mobile app", "beta testing"} <= set(described.topics)
    again = await _describe(said)
    assert again == described  # deterministic


async def test_an_owner_topic_said_once_in_hours_is_not_prominent() -> None:
    said = hours_of(MEETING_EN, 1)
    said.append(Utterance(start_ms=said[-1].end_ms, end_ms=said[-1].end_ms + 900, channel=0,
                          text="Also the budget."))
    described = await _describe(said, topics=("Budget",))
    assert "Budget" not in described.topics


async def test_words_every_recording_of_the_owner_has_weigh_less() -> None:
    plain = await _describe(utterances(MEETING_EN), archive=Archive(50))
    assert "mobile app" in plain.topics
    # The owner talks about the mobile app in every recording: it says nothing here.
    archive = Archive(50, everywhere=("mobil", "app"))
    weighed = await _describe(utterances(MEETING_EN), archive=archive)
    assert "mobile app" not in weighed.topics
    assert {"mobil", "app", "releas"} <= set(archive.asked)


async def test_no_speech_gives_an_empty_description() -> None:
    assert await _describe([]) == Description(title="", brief="", topics=(), by="extractive")


async def test_a_transcript_without_punctuation_is_cut_into_pieces() -> None:
    run = " ".join(["the", "warehouse", "inventory", "count", "was", "wrong", "again"] * 30)
    described = _checked(await _describe(_voice(run)))
    assert _words(described.title) <= _words(run)
    assert len(described.title.split()) >= 5
    assert described.brief[0].isupper()
    assert "warehouse inventory count" in described.topics


def test_centrality_ranks_the_sentence_sharing_the_most() -> None:
    rows = np.array([[1, 0, 0], [0.6, 0.8, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    scores = centrality(rows / np.linalg.norm(rows, axis=1, keepdims=True))
    assert int(np.argmax(scores)) == 1  # it shares words with the first two
    assert scores.sum() == pytest.approx(1.0)
    assert scores[3] < scores[0]  # alone: only the teleport
