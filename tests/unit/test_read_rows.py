"""`from_row` derives its fields: each read dataclass's field is the column of its name
(`transcriber.db.reads.rows.columns`), so a new field is written in the dataclass and
the query, not again in a list of columns."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, fields

import pytest

from transcriber.db.reads.records import ListItem, RecordCard, StepRecord, TimelineEvent
from transcriber.db.reads.rows import columns


@dataclass(frozen=True, slots=True, kw_only=True)
class _Pair:
    name: str
    count: int


def _row(**values: object) -> sqlite3.Row:
    connection = sqlite3.connect(":memory:")
    connection.row_factory = sqlite3.Row
    names = ", ".join(f":{key} AS {key}" for key in values)
    row: sqlite3.Row = connection.execute(f"SELECT {names}", values).fetchone()
    return row


def test_each_field_is_the_column_of_its_name() -> None:
    assert columns(_Pair, _row(count=2, name="a", extra="ignored")) == {"name": "a",
                                                                        "count": 2}


def test_a_given_value_wins_over_the_row() -> None:
    assert columns(_Pair, _row(name="a", count=2), count=3) == {"name": "a", "count": 3}


def test_a_missing_column_and_a_stray_given_name_fail_loudly() -> None:
    with pytest.raises(IndexError):
        columns(_Pair, _row(name="a"))
    with pytest.raises(TypeError, match="counts"):
        columns(_Pair, _row(name="a", count=2), counts=3)


def test_a_card_reads_every_field_from_its_row() -> None:
    """The card's query selects a column for each field the card has (the encoded ones
    decoded): a field added to the dataclass without its column fails here."""
    values: dict[str, object] = {f.name: None for f in fields(RecordCard)}
    values.update(id="r", speaker_names='{"S1": "Anna"}', topics_json='["b", "a"]',
                  quality=None)
    del values["topics"]
    card = RecordCard.from_row(_row(**values))
    assert (card.id, card.speaker_names, card.topics) == ("r", {"S1": "Anna"}, ("a", "b"))
    assert ListItem.from_row(_row(**values)).id == "r"
    event = TimelineEvent.from_row(_row(origin="pipeline", step="normalize", outcome="done",
                                        duration_ms=5, created_at="t", by_login=None))
    assert event == TimelineEvent(origin="pipeline", step="normalize", outcome="done",
                                  duration_ms=5, created_at="t", by_login=None)
    step = StepRecord.from_row(_row(id="r", duration_ms=1, source="http",
                                    original_file_name=None, normalized_file_name=None,
                                    language="en", speakers=None, normalized_channels=2,
                                    model_wanted=None))
    assert (step.language, step.channels) == ("en", 2)
