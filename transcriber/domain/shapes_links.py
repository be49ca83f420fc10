"""What the links routes answer (`/app/audiorecords/{id}/links`; the rules of
`domain.shapes` hold here too; `openapi_schemas` generates their component schemas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from transcriber.domain.links import PATH_PREFIX, SECRET_CHARS
from transcriber.domain.shapes import FORBID, Count, Doc, Id, Time


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkBody:
    """A link for people outside as its record's list shows it: never its URL."""

    __pydantic_config__ = FORBID
    id: Id
    audio: Annotated[bool, Doc("The page has the player and the audio")]
    created_at: Time
    expires_at: Annotated[str, Doc("It opens until then (UTC)",
                                   pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")]
    expired: Annotated[bool, Doc("Past `expires_at`: it answers 404 like any unknown link")]
    views: Annotated[Count, Doc("How many times its page was opened")]
    last_opened_at: Time | None


@dataclass(frozen=True, slots=True, kw_only=True)
class NewLinkBody(LinkBody):
    url: Annotated[str, Doc("Shown this once; only its hash is kept. The page; "
                            "`<url>/transcript?format=txt|srt` and `<url>/audio` beside it",
                            pattern=f"^{PATH_PREFIX}[A-Za-z0-9_-]{{{SECRET_CHARS}}}$")]
