"""The answer to a question: offline the passages themselves; with a language model
(`ports.Answerer`) a short text from the passages sent, its citations checked
(`domain.ask_prompt.checked`).

When the model cannot answer (unreachable, refusing, an unusable answer) the
passages are still the answer (`model_failed`): a question is never lost to an
endpoint's trouble. With no passage found, the model is not asked: there is
nothing it could answer from.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from transcriber.core.errors import StepFailure
from transcriber.core.observability import ASK_ANSWERS, ASK_CITATIONS_DROPPED
from transcriber.domain.ask import Question
from transcriber.domain.ask_passages import Citation, Passage, offline_citations
from transcriber.domain.ask_prompt import AskTurn, checked, messages, sent_passages
from transcriber.ports import Answerer, ChatMessage, StreamsAnswers

log = structlog.get_logger(__name__)

# Where the model's text goes as it is written (the web app's server-sent events).
TextSink = Callable[[str], Awaitable[None]]

NOTHING_FOUND = {"en": "Nothing in your recordings answers this.",
                 "ru": "В ваших записях ответа на это нет."}


@dataclass(frozen=True, slots=True, kw_only=True)
class AskAnswer:
    text: str | None
    """The model's checked answer; None offline (or when the model failed)."""
    passages: tuple[Passage, ...]
    citations: tuple[Citation, ...]
    unchecked: int
    how: str
    """offline, model, model_failed."""


def offline(found: Sequence[Passage]) -> AskAnswer:
    return AskAnswer(text=None, passages=tuple(found), citations=tuple(offline_citations(found)),
                  unchecked=0, how="offline")


async def _written(answerer: Answerer, said: Sequence[ChatMessage],
                   on_text: TextSink | None) -> str:
    """The model's whole answer; with `on_text`, each piece is handed on as it comes
    (an answerer that cannot stream hands on its whole answer once)."""
    if on_text is None:
        return await answerer.complete(said)
    if not isinstance(answerer, StreamsAnswers):
        raw = await answerer.complete(said)
        await on_text(raw)
        return raw
    pieces: list[str] = []
    async for piece in answerer.stream(said):
        pieces.append(piece)
        await on_text(piece)
    return "".join(pieces)


async def answer(question: Question, found: Sequence[Passage], *, answerer: Answerer | None,
                 max_prompt_chars: int, history: Sequence[AskTurn] = (),
                 on_text: TextSink | None = None) -> AskAnswer:
    """The answer to `question` from `found` (the passages of `retrieval.retrieve`).
    `on_text` is given the model's text as it is written, unchecked: the answer
    returned is the checked one, which replaces it (docs/ask.md, "Streamed answers")."""
    if answerer is None:
        result = offline(found)
    elif not found:
        result = AskAnswer(text=NOTHING_FOUND[question.language], passages=(), citations=(),
                        unchecked=0, how="model")
    else:
        sent = sent_passages(found, max_prompt_chars)
        said = messages(question.text, question.language, sent, max_chars=max_prompt_chars,
                        history=history)
        try:
            raw = await _written(answerer, [ChatMessage(role=role, content=content)
                                            for role, content in said], on_text)
        except StepFailure as exc:
            log.warning("ask_model_failed", error=type(exc).__name__)
            result = AskAnswer(text=None, passages=tuple(found),
                            citations=tuple(offline_citations(found)), unchecked=0,
                            how="model_failed")
        else:
            kept = checked(raw, sent, question.language)
            if kept.unchecked:
                ASK_CITATIONS_DROPPED.inc(kept.unchecked)
                log.warning("ask_citations_dropped", dropped=kept.unchecked)
            result = AskAnswer(text=kept.text, passages=tuple(sent), citations=kept.citations,
                            unchecked=kept.unchecked, how="model")
    ASK_ANSWERS.labels(how=result.how).inc()
    return result
