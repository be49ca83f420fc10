"""The answer to a question: offline the passages themselves; with a language model
(`ports.Answerer`) a short text from the passages sent, its citations checked
(`domain.ask_prompt.checked`).

When the model cannot answer (unreachable, refusing, an unusable answer) the
passages are still the answer (`model_failed`): a question is never lost to an
endpoint's trouble. With no passage found, the model is not asked: there is
nothing it could answer from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from transcriber.core.errors import StepFailure
from transcriber.core.observability import ASK_ANSWERS, ASK_CITATIONS_DROPPED
from transcriber.domain.ask import Question
from transcriber.domain.ask_passages import Citation, Passage, offline_citations
from transcriber.domain.ask_prompt import AskTurn, checked, messages, sent_passages
from transcriber.ports import Answerer, ChatMessage

log = structlog.get_logger(__name__)

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


async def answer(question: Question, found: Sequence[Passage], *, answerer: Answerer | None,
                 max_prompt_chars: int, history: Sequence[AskTurn] = ()) -> AskAnswer:
    """The answer to `question` from `found` (the passages of `retrieval.retrieve`)."""
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
            raw = await answerer.complete(
                [ChatMessage(role=role, content=content) for role, content in said])
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
