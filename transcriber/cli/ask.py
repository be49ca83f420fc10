"""`transcriber ask QUESTION [--login LOGIN] [--from DAY] [--to DAY] [--json]`: a question
put to one person's archive, on this machine (docs/ask.md).

Reads the database directly, as the service does: the passages of the person's
records (the search's own read), and with `ask.provider = openai` the model's
answer, its citations checked. Prints the answer, then each passage with its
record, day and title and its lines, the best one marked `>`; `--json` prints
what `POST /app/ask` answers (without a conversation: nothing is stored).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import date

from transcriber.ask.answers import answer
from transcriber.ask.retrieval import retrieve
from transcriber.cli.exits import EXIT_REFUSED
from transcriber.core.clock import SystemClock
from transcriber.core.errors import QueryTooBroad
from transcriber.db import reads
from transcriber.db.engine import new_readers
from transcriber.domain.ask import AskScope, read_question
from transcriber.domain.shapes import to_json
from transcriber.domain.shapes_ask import AskBody, CitationBody, PassageBody
from transcriber.ports import Answerer
from transcriber.settings import Settings


def _clock(ms: int) -> str:
    seconds = ms // 1000
    return f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _answerer(settings: Settings) -> Answerer | None:
    if settings.ask.provider == "offline":
        return None
    from transcriber.providers.ask_openai import OpenAIAnswerer  # noqa: PLC0415

    return OpenAIAnswerer(settings.ask)


async def ask_command(settings: Settings, *, question: str, login: str | None,
                      date_from: date | None, date_to: date | None, as_json: bool) -> int:
    readers = new_readers(settings.storage, size=1)
    await readers.open()
    answerer = _answerer(settings)
    try:
        user = await reads.users.by_login(readers,
                                          login=login or settings.server.anonymous_user)
        if user is None:
            print("transcriber: no user has that login", file=sys.stderr)
            return EXIT_REFUSED
        scope = AskScope(date_from=date_from, date_to=None if date_to is None
                         else date.fromordinal(date_to.toordinal() + 1))
        try:
            read = read_question(question, today=SystemClock().now().date(), scope=scope)
        except QueryTooBroad as exc:
            print(f"transcriber: the question is too broad ({exc.reason})", file=sys.stderr)
            return EXIT_REFUSED
        found = await retrieve(readers, owner_id=user.id, question=read)
        result = await answer(read, found, answerer=answerer,
                              max_prompt_chars=settings.ask.max_prompt_chars)
    finally:
        if answerer is not None:
            await answerer.close()
        await readers.close()
    if as_json:
        print(to_json(AskBody(
            answer=result.text,
            passages=[PassageBody.of(p, n) for n, p in enumerate(result.passages, 1)],
            citations=[CitationBody(record_id=c.record_id, utterance_index=c.line.index,
                                    start_ms=c.line.start_ms, end_ms=c.line.end_ms,
                                    speaker=c.line.speaker, quote=c.quote, passage=c.passage)
                       for c in result.citations],
            conversation=None, unchecked=result.unchecked, language=read.language)).decode())
        return 0
    if result.text is not None:
        print(result.text, end="\n\n")
    if not result.passages:
        print("nothing found" if read.language == "en" else "ничего не найдено")
    for number, passage in enumerate(result.passages, start=1):
        print(f"[{number}] {passage.created_at[:10]} {passage.title or '-'} "
              f"({passage.record_id})")
        for line in passage.lines:
            mark = ">" if line.index == passage.best.index else " "
            print(f" {mark} {_clock(line.start_ms)} {line.speaker or '-'}: {line.text}")
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(ask_command(settings, question=args.question, login=args.login,
                                   date_from=args.date_from, date_to=args.date_to,
                                   as_json=args.json))
