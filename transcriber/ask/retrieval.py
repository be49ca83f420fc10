"""The passages a question may be answered from, among the records the asker may see.

Candidates come from the search's own read (`reads.access.search_page`: what
the person may see under the one access decision, and its index), asked for
any of the question's words: whoever search shows a record to is whoever ask
may quote it to, and nobody else. The
scope then narrows them (records, days, topics); each candidate's current
transcript is read and its usable lines (`domain.ask_passages.usable_lines`)
ranked. The work is bounded whatever the archive's size: at most
`CANDIDATES` records are read, each one lookup by key.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.domain.ask import Question, in_days
from transcriber.domain.ask_passages import PASSAGES_MAX, Candidate, Passage, passages, usable_lines
from transcriber.domain.transcripts import BadStructure

log = structlog.get_logger(__name__)

CANDIDATES = 20
"""Records read for passages at most (the index's best)."""
_WIDER = 4  # a scope's filter reads this many times more hits before it narrows them


async def candidates(readers: ReaderPool, *, owner_id: str,
                     question: Question) -> list[Candidate]:
    """The best records for the question that the scope admits, with their usable lines."""
    scope = question.scope
    narrowed = bool(scope.records or scope.topics or scope.date_from or scope.date_to)
    # Everything the asker may see (own, their spaces', shared with them), or one space
    # of theirs: the search's own read under the one access decision.
    hits = await reads.access.search_page(
        readers, user_id=owner_id, query=question.query,
        limit=CANDIDATES * (_WIDER if narrowed or scope.space else 1),
        kind="space" if scope.space else "visible", space_id=scope.space)
    found: list[Candidate] = []
    for hit in hits:
        item = hit.item
        if item.state != "done":
            continue
        if scope.records and item.id not in scope.records:
            continue
        if scope.topics and not set(scope.topics) & set(item.topics):
            continue
        if not in_days(item.created_at, scope):
            continue
        try:
            utterances = await reads.transcripts.utterances(readers, record_id=item.id)
        except BadStructure:
            log.error("ask_bad_structure", record_id=item.id)
            continue
        if not utterances:
            continue
        lines = usable_lines(utterances, item.quality, item.speaker_names)
        found.append(Candidate(
            record_id=item.id, title=item.title, created_at=item.created_at,
            about=" ".join((item.title, item.brief, *item.topics)), lines=lines,
            rank=len(found)))
        if len(found) == CANDIDATES:
            break
    return found


async def retrieve(readers: ReaderPool, *, owner_id: str, question: Question,
                   limit: int = PASSAGES_MAX) -> Sequence[Passage]:
    """The question's best passages among the owner's records, grouped by record."""
    if not question.query.required:
        return []
    found = await candidates(readers, owner_id=owner_id, question=question)
    return passages(question.query, found, names=question.names,
                    speaker=question.scope.speaker, limit=limit)
