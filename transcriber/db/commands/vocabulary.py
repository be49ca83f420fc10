"""A person's or a space's vocabulary, replaced whole (`PUT /app/vocabulary`,
`PUT /app/spaces/{id}/vocabulary`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import orjson

from transcriber.db import queries as q
from transcriber.db.writer import Command, WriteContext


@dataclass(frozen=True, slots=True, kw_only=True)
class SetVocabulary(Command[None]):
    """Keep `terms` (already cleaned: `domain.vocabulary.clean_terms`) as the person's."""

    name: ClassVar[str] = "set_vocabulary"
    owner_id: str
    terms: tuple[str, ...]

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.vocabulary.UPSERT, {
            "owner_id": self.owner_id, "terms": orjson.dumps(list(self.terms)).decode(),
            "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class SetSpaceVocabulary(Command[None]):
    """Keep `terms` (already cleaned: `domain.vocabulary.clean_terms`) as the space's."""

    name: ClassVar[str] = "set_space_vocabulary"
    space_id: str
    terms: tuple[str, ...]

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.vocabulary.UPSERT_SPACE, {
            "space_id": self.space_id, "terms": orjson.dumps(list(self.terms)).decode(),
            "now": ctx.now()})
