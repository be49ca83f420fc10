"""The describer after `done`, on real SQLite: its job written with `done`, the fields no
person set written `auto`, a person's edit kept through re-transcription, retries with
backoff, the extractive fallback, `failed`, and the record `done` throughout."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.helpers.describe import Finisher, ScriptedDescriber
from tests.helpers.factories import make_record, make_user
from tests.helpers.meetings import MEETING_EN, MEETING_RU, VOICE_EN, utterances
from tests.helpers.pipeline import MakeActor, sample
from transcriber.core.clock import format_time
from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.core.ids import new_id
from transcriber.db import reads
from transcriber.db.commands.describe import SaveDescription
from transcriber.db.commands.edits import EditRecord
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.commands.retranscribe import Retranscribe
from transcriber.db.commands.spaces import CreateSpace, MoveRecord, SetMember
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.records import RecordCard
from transcriber.db.writer import Writer
from transcriber.domain.access import AccessRole
from transcriber.domain.describe import Description
from transcriber.domain.quality import assess
from transcriber.followups.describe import DescriberActor, load_material
from transcriber.ports import Describer, Span, Utterance, Word
from transcriber.providers.describe.extractive import ExtractiveDescriber
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock

ANSWER = Description(title="Model title", brief="Model brief.", topics=("model topic",),
                     by="openai:scripted")


@pytest.fixture
def finisher(make_actor: MakeActor, writer: Writer, readers: ReaderPool,
             clock: FakeClock) -> Finisher:
    return Finisher(make_actor=make_actor, writer=writer, readers=readers, clock=clock)


def _actor(writer: Writer, readers: ReaderPool, clock: FakeClock, settings: Settings, *,
           describer: Describer | None = None, fallback: Describer | None = None,
           told: list[str] | None = None, **limits: Any) -> DescriberActor:
    async def described(record_id: str) -> None:
        if told is not None:
            told.append(record_id)

    return DescriberActor(writer=writer, readers=readers, clock=clock,
                          describer=describer or ExtractiveDescriber(), fallback=fallback,
                          settings=dataclasses.replace(settings.describer, **limits),
                          described=described)


async def _card(readers: ReaderPool, record_id: str) -> RecordCard:
    subject = await reads.describe.subject(readers, record_id=record_id)
    assert subject is not None
    found = await reads.records.card(readers, record_id=record_id, owner_id=subject.owner_id)
    assert found is not None
    return found


async def test_done_writes_the_job_and_wakes_the_describer(
    finisher: Finisher, readers: ReaderPool,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    job = await reads.describe.job(readers, record_id=record_id)
    assert job is not None
    assert (job.state, job.generation, job.attempts) == ("pending", 1, 0)
    assert finisher.woken == ["wake"]
    card = await _card(readers, record_id)
    assert card.state == "done"
    assert card.describe_state == "pending"
    assert card.title_origin is None


async def test_without_a_describer_done_writes_no_job(finisher: Finisher,
                                                      readers: ReaderPool) -> None:
    finisher.describing = False
    record_id = await finisher.finish(utterances(MEETING_EN))
    assert await reads.describe.job(readers, record_id=record_id) is None
    assert (await _card(readers, record_id)).describe_state is None


async def test_the_describer_writes_every_field_nobody_set(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_RU))
    told: list[str] = []
    assert await _actor(writer, readers, clock, settings, told=told).round() == 1
    card = await _card(readers, record_id)
    assert "переезд" in card.title.lower()
    assert card.brief
    assert card.topics
    assert (card.title_origin, card.brief_origin, card.topics_origin) == ("auto",) * 3
    assert card.described_by == "extractive"
    assert card.describe_state == "done"
    assert card.state == "done"
    assert told == [record_id]  # the waiting reply hears of it


async def test_a_persons_fields_survive_re_transcription(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    actor = _actor(writer, readers, clock, settings)
    await actor.round()
    owner = (await reads.describe.subject(readers, record_id=record_id)).owner_id  # type: ignore[union-attr]
    # A person renames it and clears the topics; the brief stays the describer's.
    await writer.ask(EditRecord(record_id=record_id, owner_id=owner, title="My own title",
                                topics=()))
    first_brief = (await _card(readers, record_id)).brief
    await writer.ask(Retranscribe(record_id=record_id, owner_id=owner))
    await finisher.finish(utterances(MEETING_RU), record_id=record_id)
    job = await reads.describe.job(readers, record_id=record_id)
    assert job is not None
    assert (job.state, job.generation) == ("pending", 2)
    await actor.round()
    card = await _card(readers, record_id)
    assert (card.title, card.title_origin) == ("My own title", "human")
    assert (card.topics, card.topics_origin) == ((), "human")  # cleared: the person's
    assert card.brief_origin == "auto"
    assert card.brief != first_brief  # described again from the new transcript
    assert "переезд" in card.brief.lower() or "офис" in card.brief.lower()


async def test_a_failing_describer_retries_with_backoff_then_falls_back(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    failing = ScriptedDescriber(script=[TransientFailure("down")] * 3)
    actor = _actor(writer, readers, clock, settings, describer=failing,
                   fallback=ExtractiveDescriber(), attempts_limit=3, retry_base_seconds=10,
                   retry_cap_seconds=600)
    fallbacks = sample("transcriber_descriptions_total",
                       {"provider": "extractive", "outcome": "fallback"})
    await actor.round()
    job = await reads.describe.job(readers, record_id=record_id)
    assert job is not None
    assert (job.state, job.attempts) == ("pending", 1)
    assert await actor.round() == 0  # not due for 10 s
    clock.advance(10)
    await actor.round()
    job = await reads.describe.job(readers, record_id=record_id)
    assert job is not None
    assert (job.state, job.attempts) == ("pending", 2)
    clock.advance(10)
    assert await actor.round() == 0  # doubled: 20 s
    clock.advance(10)
    await actor.round()  # the third and last try fails: the extractive description
    card = await _card(readers, record_id)
    assert (card.describe_state, card.described_by, card.state) == ("done", "extractive",
                                                                    "done")
    assert card.halted_at is None
    assert "release" in card.title.lower()
    assert len(failing.given) == 3
    assert sample("transcriber_descriptions_total",
                  {"provider": "extractive", "outcome": "fallback"}) == fallbacks + 1


async def test_a_refusal_falls_back_at_once(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    refusing = ScriptedDescriber(script=[PermanentFailure("401")])
    await _actor(writer, readers, clock, settings, describer=refusing,
                 fallback=ExtractiveDescriber()).round()
    card = await _card(readers, record_id)
    assert (card.describe_state, card.described_by) == ("done", "extractive")
    assert len(refusing.given) == 1


async def test_without_a_fallback_the_job_fails_and_the_record_stays_done(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    told: list[str] = []
    await _actor(writer, readers, clock, settings, told=told,
                 describer=ScriptedDescriber(script=[PermanentFailure("no")])).round()
    card = await _card(readers, record_id)
    assert (card.describe_state, card.state, card.halted_at) == ("failed", "done", None)
    assert (card.title, card.title_origin) == ("", None)
    assert told == [record_id]  # a waiting reply goes without a title now


async def test_a_description_of_an_older_transcript_is_not_written(
    finisher: Finisher, writer: Writer, readers: ReaderPool,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    owner = (await reads.describe.subject(readers, record_id=record_id)).owner_id  # type: ignore[union-attr]
    await writer.ask(Retranscribe(record_id=record_id, owner_id=owner))
    await finisher.finish([Utterance(start_ms=0, end_ms=900, channel=0, text=VOICE_EN)],
                          record_id=record_id)
    saved = await writer.ask(SaveDescription(record_id=record_id, description=ANSWER,
                                             generation=1))
    assert saved.stale
    assert (await _card(readers, record_id)).title == ""


async def test_a_record_sent_back_is_settled_without_a_write(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    owner = (await reads.describe.subject(readers, record_id=record_id)).owner_id  # type: ignore[union-attr]
    await writer.ask(Retranscribe(record_id=record_id, owner_id=owner))
    describer = ScriptedDescriber(default=ANSWER)
    await _actor(writer, readers, clock, settings, describer=describer).round()
    assert describer.given == []  # no call for a transcript about to change
    card = await _card(readers, record_id)
    assert (card.describe_state, card.title) == ("done", "")


async def test_the_describer_is_given_the_corrected_transcript_and_the_owners_topics(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    other = await finisher.finish(utterances(MEETING_RU))
    owner = (await reads.describe.subject(readers, record_id=other)).owner_id  # type: ignore[union-attr]
    await writer.ask(EditRecord(record_id=other, owner_id=owner, topics=("Release", "Офис")))
    record_id = await finisher.finish(utterances(MEETING_EN))
    describer = ScriptedDescriber(default=ANSWER)
    await _actor(writer, readers, clock, settings, describer=describer).round()
    given = {material.record_id: material for material in describer.given}[record_id]
    assert given.owner_topics == ("Release", "Офис")
    assert given.duration_ms > 0
    assert [u.text for u in given.utterances] == list(MEETING_EN)
    card = await _card(readers, record_id)
    assert (card.title, card.described_by) == ("Model title", "openai:scripted")
    assert card.topics == ("model topic",)


async def test_topics_written_by_the_describer_prefer_the_owners(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    first = await finisher.finish(utterances(MEETING_EN))
    owner = (await reads.describe.subject(readers, record_id=first)).owner_id  # type: ignore[union-attr]
    await writer.ask(EditRecord(record_id=first, owner_id=owner, topics=("Beta testing",)))
    second = await finisher.finish(utterances(MEETING_EN))
    await _actor(writer, readers, clock, settings).round()
    card = await _card(readers, second)
    assert card.topics == ("Beta testing",)  # the owner's name, not a new "beta testing"
    assert card.topics_origin == "auto"


async def test_the_retry_time_is_the_backoff(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    record_id = await finisher.finish(utterances(MEETING_EN))
    asked_later = TransientFailure("busy", retry_after=120)
    await _actor(writer, readers, clock, settings, attempts_limit=5, retry_base_seconds=10,
                 describer=ScriptedDescriber(script=[asked_later])).round()
    due = await reads.describe.due_jobs(readers, now=format_time(clock.now()), limit=5)
    assert due == []
    clock.advance(119)
    assert await reads.describe.due_jobs(readers, now=format_time(clock.now()), limit=5) == []
    clock.advance(1)
    [job] = await reads.describe.due_jobs(readers, now=format_time(clock.now()), limit=5)
    assert job.record_id == record_id


async def test_a_title_sent_with_the_recording_is_the_senders(
    writer: Writer, readers: ReaderPool,
) -> None:
    owner = await make_user(writer, "carol")
    titled, plain = new_id(), new_id()
    for record_id, title in ((titled, "Voice note for Anna"), (plain, "")):
        file_id = new_id()
        await writer.ask(AcceptRecord(
            record_id=record_id, owner_id=owner.id, title=title, original_filename="v.ogg",
            duration_ms=1000, original=StoredFile(id=file_id, file_name=f"{file_id}.ogg",
                                                  size_bytes=10, format="ogg",
                                                  duration_ms=1000)))
    assert (await _card(readers, titled)).title_origin == "human"
    assert (await _card(readers, plain)).title_origin is None


async def test_a_poor_transcript_gets_no_title_made_of_its_few_words(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    said = [Utterance(start_ms=0, end_ms=2000, channel=0, text="Thank you for watching")]
    poor = assess(said, speech=[Span(start_ms=0, end_ms=60_000)],
                  unclear=[Span(start_ms=2000, end_ms=60_000)], repeats_removed=0)
    assert poor.verdict == "poor"
    record_id = await finisher.finish(said, quality=poor)
    scripted = ScriptedDescriber(default=ANSWER)
    assert await _actor(writer, readers, clock, settings, describer=scripted).round() == 1
    assert scripted.given == []  # not even asked: a model would make something up
    card = await _card(readers, record_id)
    assert (card.title, card.brief, card.topics) == ("", "", ())
    assert card.describe_state == "done"
    assert card.quality is not None
    assert card.quality.reasons == ("unclear_speech",)


async def test_lines_the_recognizer_was_unsure_of_are_no_material(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    def line(start: int, text: str, probability: float) -> Utterance:
        words = tuple(Word(start_ms=start, end_ms=start + 500, text=f" {w}",
                           probability=probability) for w in text.split())
        return Utterance(start_ms=start, end_ms=start + 3000, channel=0, text=text,
                         words=words)

    said = [line(0, "We plan the move to Berlin", 0.9), line(3000, "blorp zzt wump", 0.1)]
    record_id = await finisher.finish(said)
    scripted = ScriptedDescriber(default=ANSWER)
    await _actor(writer, readers, clock, settings, describer=scripted).round()
    [material] = scripted.given
    assert [u.text for u in material.utterances] == ["We plan the move to Berlin"]
    assert (await _card(readers, record_id)).title == "Model title"


async def test_a_record_in_a_space_is_given_the_spaces_topics(
    finisher: Finisher, writer: Writer, readers: ReaderPool, clock: FakeClock,
    settings: Settings,
) -> None:
    """The dictionary of a space's record is every member's topics (docs/sharing.md)."""
    record_id = await finisher.finish(utterances(MEETING_EN))
    owner = (await reads.describe.subject(readers, record_id=record_id)).owner_id  # type: ignore[union-attr]
    await writer.ask(EditRecord(record_id=record_id, owner_id=owner, topics=("Mine",)))
    member = await make_user(writer, "vera")
    theirs = await finisher.finish(utterances(MEETING_RU))
    await writer.ask(EditRecord(record_id=theirs, owner_id=owner, topics=("Mine",)))
    space = await writer.ask(CreateSpace(space_name="family", admin_id=owner))
    await writer.ask(SetMember(space_id=space.id, user_id=member.id, role=AccessRole.EDITOR))
    stranger = await make_user(writer, "sam")
    for user, topic in ((member, "Garden"), (stranger, "Secret")):
        own = await make_record(writer, user)
        await writer.ask(EditRecord(record_id=own, owner_id=user.id, topics=(topic,)))
    await writer.ask(MoveRecord(record_id=record_id, space_id=space.id, actor_id=owner))
    subject = await reads.describe.subject(readers, record_id=record_id)
    assert subject is not None
    assert subject.space_id == space.id
    material = await load_material(readers, subject)
    assert material.owner_topics == ("Garden", "Mine")  # never a stranger's
    alone = await reads.describe.subject(readers, record_id=theirs)
    assert alone is not None
    assert (await load_material(readers, alone)).owner_topics == ("Mine",)
