"""What the extractive describer makes of a few records people would judge: messages,
meetings and lectures in Russian and English, as a markdown table (docs/describer.md):

    PYTHONPATH=$PWD .venv/bin/python -m tests.helpers.describe_examples

Run with an older `transcriber` first on the path to see what it made of the same
records (the table's "before")."""

from __future__ import annotations

import asyncio

from tests.helpers.meetings import (
    LECTURE_EN,
    LECTURE_RU,
    MEETING_EN,
    MEETING_RU,
    VOICE_EN,
    VOICE_RU,
    utterances,
)
from transcriber.ports import Material, Utterance
from transcriber.providers.describe.extractive import ExtractiveDescriber

MESSAGE_RU = "Завтра встреча по бюджету отдела продаж, приходи к десяти."
MESSAGE_EN = "Hi Anna, please call me back about the invoice for the Moscow office."
FINANCE_EN = ("We talked about finance today.", "Finance is hard this month.",
              "Our finances are fine though.")

EXAMPLES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("message (ru)", (VOICE_RU,), ()),
    ("message (ru), said three times", (VOICE_RU, VOICE_RU, VOICE_RU), ()),
    ("message (ru)", (MESSAGE_RU,), ()),
    ("message (en)", (VOICE_EN,), ()),
    ("message (en)", (MESSAGE_EN,), ()),
    ("message (en), the owner has “Finance”", FINANCE_EN, ("Finance",)),
    ("meeting (en), 27 turns", MEETING_EN, ()),
    ("meeting (ru), 24 turns", MEETING_RU, ()),
    ("lecture (en)", LECTURE_EN, ()),
    ("lecture (ru)", LECTURE_RU, ()),
)


def _said(lines: tuple[str, ...]) -> list[Utterance]:
    return utterances(lines)


async def table() -> str:
    describer = ExtractiveDescriber()
    rows = ["| record | title | brief | topics |", "| --- | --- | --- | --- |"]
    for label, lines, owner_topics in EXAMPLES:
        said = _said(lines)
        described = await describer.describe(Material(
            record_id="example", language="", duration_ms=said[-1].end_ms,
            utterances=tuple(said), owner_topics=owner_topics, archive=None))
        brief = described.brief if len(described.brief) <= 90 else \
            described.brief[:87].rsplit(" ", 1)[0] + " …"
        rows.append(f"| {label} | {described.title or '—'} | {brief or '—'} | "
                    f"{', '.join(described.topics) or '—'} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(asyncio.run(table()))
