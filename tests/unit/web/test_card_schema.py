"""The OpenAPI schemas of a record (`Record`) and its card (`Card`), field by field
against the dataclasses the reads answer and the views that render them (the
schemas are generated from the response shapes the views build: this holds the
reads to the shapes).

Each field of `ListItem`, `RecordCard` and `TimelineEvent` is changed in turn
and the answers `record_summary` and `record_card` render are compared: every
place a field changes must be in the schema, and a field that changes nothing
must be in `NOT_SHOWN` with its reason. Every object of the rendered answers
has exactly the properties its schema lists, so a property the schema names
but no view renders fails too. A field added to the card thus fails here
until the sample below, the view and the schema have it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from transcriber.db.reads.records import ListItem, RecordCard, TimelineEvent
from transcriber.db.reads.voices import VoiceSuggestion
from transcriber.domain.quality import Quality
from transcriber.domain.shapes import plain
from transcriber.followups.card import record_card, record_summary
from transcriber.pipeline.progress import Progress
from transcriber.ports import Span, Utterance, Word
from transcriber.web.openapi_schemas import component_schemas

SCHEMAS = component_schemas()

# Fields the reads carry that no answer shows, each with its reason.
NOT_SHOWN: dict[str, str] = {
    "speakers": "how many speakers the uploader said there are: an input of the speaker "
                "step; the card shows the speakers found (`speakers` of the card)",
}

ITEM: dict[str, Any] = {
    "id": "01hzzzzzzzzzzzzzzzzzzzzzzz", "title": "Lecture", "original_filename": "a.mp3",
    "source": "http", "via": "folder", "state": "normalized", "halted_at": "2026-01-01T00:00:03Z",
    "halt_reason": "stuck", "error_text": "no answer", "duration_ms": 60_000,
    "size_bytes": 1000, "created_at": "2026-01-01T00:00:01Z",
    "updated_at": "2026-01-01T00:00:02Z", "brief": "About", "language": "auto",
    "detected_language": "en", "revision": 2, "speaker_names": {"S1": "Anna"}, "speakers": 2,
    "topics": ("a", "b"), "title_origin": "auto", "brief_origin": "human",
    "topics_origin": "auto", "described_by": "extractive", "describe_state": "done",
    "quality": Quality(verdict="check", reasons=("unclear_speech",), speech_ms=30_000,
                       unclear_ms=3_000, unclear_spans=(Span(start_ms=1000, end_ms=4000),),
                       repeats_removed=0, low_confidence_share=0.1),
    "space_id": "01hzzzzzzzzzzzzzzzzzzzzzzx",
}
CARD: dict[str, Any] = {
    **ITEM, "original_size_bytes": 1000, "original_format": "mp3",
    "normalized_size_bytes": 500, "normalized_format": "ogg", "normalized_duration_ms": 59_000,
    "model": "gigaam-v3",
}
EVENT: dict[str, Any] = {"origin": "pipeline", "step": "normalize", "outcome": "done",
                         "duration_ms": 1200, "created_at": "2026-01-01T00:00:02Z",
                         "by_login": "olga"}
SUGGESTION: dict[str, Any] = {"speaker": "S2", "profile_id": "01hzzzzzzzzzzzzzzzzzzzzzzy",
                              "name": "Boris", "similarity": 0.81}
UTTERANCES = [Utterance(start_ms=0, end_ms=900, channel=0, text="Hello", speaker="S1",
                        words=(Word(start_ms=0, end_ms=900, text=" Hello", probability=0.4),))]
PROGRESS = Progress(stage="recognize", done=1, total=2, fraction=0.5, eta_seconds=10)


def _summary(item: ListItem) -> dict[str, Any]:
    answer: dict[str, Any] = plain(record_summary(item, progress=PROGRESS.as_dict()))
    return answer


def _card(card: RecordCard, event: TimelineEvent | None = None,
          suggestion: VoiceSuggestion | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = plain(record_card(
        card, timeline=[event or TimelineEvent(**EVENT)], transcript="Hello",
        utterances=UTTERANCES, poll_after_ms=1000, progress=PROGRESS.as_dict(),
        original_speakers=("S2",), suggestions=[suggestion or VoiceSuggestion(**SUGGESTION)]))
    return answer


def _other(value: object) -> object:
    """A different value of the same type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return (*value, "zz")
    if isinstance(value, Quality):
        return dataclasses.replace(value, repeats_removed=value.repeats_removed + 1)
    if isinstance(value, Mapping):
        return {key: f"{name}x" for key, name in value.items()}
    raise AssertionError(f"give the test a way to change a {type(value).__name__}")


def _changed(before: object, after: object, path: str = "") -> Iterator[str]:
    """The paths (`halt.message`, `files.original.size_bytes`) where two answers differ."""
    if isinstance(before, dict) and isinstance(after, dict) and before.keys() == after.keys():
        for key in before:
            yield from _changed(before[key], after[key], f"{path}.{key}".lstrip("."))
    elif (isinstance(before, list) and isinstance(after, list)
          and len(before) == len(after)):
        for index, (one, other) in enumerate(zip(before, after, strict=True)):
            yield from _changed(one, other, f"{path}.{index}")
    elif before != after:
        yield path


def _resolve(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema with `$ref`, `allOf` and a nullable `anyOf` taken apart."""
    if "$ref" in schema:
        return _resolve(SCHEMAS[schema["$ref"].rsplit("/", 1)[1]])
    if "allOf" in schema:
        merged: dict[str, Any] = {"type": "object", "properties": {}}
        for part in schema["allOf"]:
            merged["properties"].update(_resolve(part).get("properties", {}))
        return merged
    if "anyOf" in schema:
        [real] = [part for part in schema["anyOf"] if part != {"type": "null"}]
        return _resolve(real)
    return dict(schema)


def _schema_at(name: str, path: str) -> dict[str, Any] | None:
    schema = _resolve(SCHEMAS[name])
    for part in path.split("."):
        if part in schema.get("properties", {}):
            schema = _resolve(schema["properties"][part])
        elif isinstance(schema.get("additionalProperties"), dict):
            schema = _resolve(schema["additionalProperties"])
        elif part.isdigit() and "items" in schema:
            schema = _resolve(schema["items"])
        else:
            return None
    return schema


def _undocumented(name: str, paths: list[str]) -> list[str]:
    return [path for path in paths if _schema_at(name, path) is None]


def _field_changes(cls: type, sample: dict[str, Any], render: Any) -> dict[str, list[str]]:
    base = render(cls(**sample))
    return {field.name: list(_changed(base, render(cls(**{
        **sample, field.name: _other(sample[field.name])}))))
        for field in dataclasses.fields(cls)}


def test_the_samples_fill_every_field() -> None:
    # A field added to a dataclass needs a sample here (and then a place below).
    for cls, sample in ((ListItem, ITEM), (RecordCard, CARD), (TimelineEvent, EVENT),
                        (VoiceSuggestion, SUGGESTION)):
        assert set(sample) == {field.name for field in dataclasses.fields(cls)}, cls


def test_every_field_a_list_item_shows_is_in_the_record_schema() -> None:
    changes = _field_changes(ListItem, ITEM, _summary)
    assert {name: _undocumented("Record", paths) for name, paths in changes.items()
            if _undocumented("Record", paths)} == {}
    assert changes["state"] == ["stage"]
    assert changes["error_text"] == ["halt.message"]


def test_every_field_of_the_card_is_shown_and_in_the_card_schema() -> None:
    changes = _field_changes(RecordCard, CARD, _card)
    shown = {name for name, paths in changes.items() if paths}
    assert set(changes) - shown == set(NOT_SHOWN)
    assert {name: _undocumented("Card", paths) for name, paths in changes.items()
            if _undocumented("Card", paths)} == {}
    assert changes["normalized_format"] == ["files.normalized.format"]
    assert changes["speaker_names"] == ["speakers.S1.name"]
    assert changes["title_origin"] == ["described.title"]
    assert changes["describe_state"] == ["described.state"]


def test_every_field_of_a_timeline_event_is_shown_and_in_the_card_schema() -> None:
    card = RecordCard(**CARD)
    changes = _field_changes(TimelineEvent, EVENT, lambda event: _card(card, event))
    assert all(changes.values()), changes
    assert {name: _undocumented("Card", paths) for name, paths in changes.items()
            if _undocumented("Card", paths)} == {}


def test_every_field_of_a_voice_suggestion_is_shown_and_in_the_card_schema() -> None:
    card = RecordCard(**CARD)
    changes = _field_changes(VoiceSuggestion, SUGGESTION,
                             lambda found: _card(card, suggestion=found))
    assert all(changes.values()), changes
    assert {name: _undocumented("Card", paths) for name, paths in changes.items()
            if _undocumented("Card", paths)} == {}
    assert changes["name"] == ["speakers.S2.suggested.name"]
    # A named speaker shows no suggestion: S1 is "Anna" in the sample.
    named = _card(card, suggestion=VoiceSuggestion(**{**SUGGESTION, "speaker": "S1"}))
    assert named["speakers"]["S1"]["suggested"] is None


def _objects(answer: object, schema: dict[str, Any], path: str) -> Iterator[
        tuple[str, set[str], set[str]]]:
    """Each object of the answer: its path, its keys and the properties its schema lists."""
    if isinstance(answer, dict):
        properties = schema.get("properties")
        if properties is not None:
            yield path, set(answer), set(properties)
        for key, value in answer.items():
            inner = properties.get(key) if properties is not None else \
                schema.get("additionalProperties")
            if isinstance(inner, dict):  # else: a key the schema lacks, reported above
                yield from _objects(value, _resolve(inner), f"{path}.{key}")
    elif isinstance(answer, list):
        for index, value in enumerate(answer):
            yield from _objects(value, _resolve(schema["items"]), f"{path}.{index}")


@pytest.mark.parametrize("name", ["Record", "Card"])
def test_every_object_of_the_answer_has_the_properties_of_its_schema(name: str) -> None:
    answer = _summary(ListItem(**ITEM)) if name == "Record" else _card(RecordCard(**CARD))
    objects = list(_objects(answer, _resolve(SCHEMAS[name]), name))
    assert {path for path, _, _ in objects} >= {
        name, f"{name}.halt", f"{name}.progress"}  # the sample fills the nullable parts
    assert [(path, sorted(keys ^ properties)) for path, keys, properties in objects
            if keys != properties] == []


def test_the_check_finds_a_field_the_schema_lacks() -> None:
    changed = list(_changed(_summary(ListItem(**ITEM)),
                            {**_summary(ListItem(**ITEM)), "stage": "done"}))
    assert changed == ["stage"]
    assert _undocumented("Record", ["favourite", "halt.colour", "stage"]) == [
        "favourite", "halt.colour"]
    extra = {**_summary(ListItem(**ITEM)), "favourite": True}
    assert [path for path, keys, properties
            in _objects(extra, _resolve(SCHEMAS["Record"]), "Record")
            if keys != properties] == ["Record"]
