"""`ask.answers.answer` with a text sink (the web app's streamed answer): the pieces go
out as the model writes them, unchecked; what is returned is the checked answer; a
model that cannot stream hands on its whole text once; a stream that breaks midway
leaves the passages as the answer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import date

from transcriber.ask.answers import answer
from transcriber.core.errors import TransientFailure
from transcriber.domain.ask import read_question
from transcriber.domain.ask_passages import Line, Passage
from transcriber.ports import ChatMessage

LINES = (Line(index=0, start_ms=0, end_ms=900, speaker="Anna",
              text="Prices rose by twelve percent."),)
FOUND = [Passage(record_id="r1", title="T", created_at="2026-01-01T00:00:00Z", lines=LINES,
                 best=LINES[0], sentence=(0, 30), score=1.0)]
QUESTION = read_question("How much did prices rise?", today=date(2026, 1, 10))


class Whole:
    name = "whole"

    def __init__(self, text: str) -> None:
        self.text = text

    async def complete(self, messages: Sequence[ChatMessage]) -> str:
        return self.text

    async def close(self) -> None:
        return None


class Streamed(Whole):
    def __init__(self, pieces: Sequence[str], *, breaks: bool = False) -> None:
        super().__init__("".join(pieces))
        self.pieces = pieces
        self.breaks = breaks

    async def stream(self, messages: Sequence[ChatMessage]) -> AsyncIterator[str]:
        for piece in self.pieces:
            yield piece
        if self.breaks:
            raise TransientFailure("the endpoint could not be reached (ClientPayloadError)")


async def test_pieces_go_out_unchecked_and_the_checked_answer_is_returned() -> None:
    got: list[str] = []

    async def send(piece: str) -> None:
        got.append(piece)
    model = Streamed(["Twelve", " percent", " [1]", " and [9]."])
    result = await answer(QUESTION, FOUND, answerer=model, max_prompt_chars=4000,
                          on_text=send)
    assert got == ["Twelve", " percent", " [1]", " and [9]."]
    assert result.how == "model"
    assert result.unchecked == 1
    assert result.text is not None
    assert "[9]" not in result.text
    assert [c.record_id for c in result.citations] == ["r1"]


async def test_a_model_that_cannot_stream_hands_on_its_whole_text_once() -> None:
    got: list[str] = []

    async def send(piece: str) -> None:
        got.append(piece)
    result = await answer(QUESTION, FOUND, answerer=Whole("Twelve percent [1]."),
                          max_prompt_chars=4000, on_text=send)
    assert got == ["Twelve percent [1]."]
    assert result.text == "Twelve percent [1]."


async def test_a_stream_broken_midway_answers_with_the_passages() -> None:
    got: list[str] = []

    async def send(piece: str) -> None:
        got.append(piece)
    result = await answer(QUESTION, FOUND, answerer=Streamed(["Twelve"], breaks=True),
                          max_prompt_chars=4000, on_text=send)
    assert got == ["Twelve"]
    assert result.how == "model_failed"
    assert result.text is None
    assert result.passages == tuple(FOUND)


async def test_without_a_sink_the_whole_answer_is_asked_for() -> None:
    model = Streamed(["never", " streamed"])
    model.text = "Asked whole [1]."
    result = await answer(QUESTION, FOUND, answerer=model, max_prompt_chars=4000)
    assert result.text == "Asked whole [1]."
