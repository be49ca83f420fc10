"""Text while recording (issue 42, item 4): `GET /app/uploads/{id}/text` answers the
text so far of the asker's upload going on, and the actor `LiveText` recognizes it.

The web app's recorder sends its chunks through the resumable upload as it records
(every few seconds) and asks this route as often. Each ask marks the upload wanted;
the actor (the supervised task `live-text`, `service/uploads.py`) takes the stored
audio past what it heard a window at a time (`domain.live_text`: a whole
`WINDOW_MS`, cut at a pause, silence skipped), decodes it from the partial file
(`DecodesSamples`) and recognizes it in memory with the one loaded recognizer
(`RecognizesSamples`, the Wyoming door's path): the text lags the recording by
about one window.

Bounds: one window is recognized at a time in the whole process (the wanted
uploads take turns), one upload per person is followed (a newer one replaces
it), and an upload nobody asked about for `FORGET_SECONDS` is forgotten. The text
lives in this process's memory only and is never logged; it is a preview: the
finished upload becomes a record the pipeline recognizes whole, and that
transcript is the record's. A recognizer without `RecognizesSamples` (a remote
one) answers `available: false` and the page shows no preview.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import structlog
from aiohttp import web

from transcriber.core.clock import Clock, rest, stamp
from transcriber.core.errors import PermanentFailure, TranscriberError
from transcriber.core.ids import parse_id
from transcriber.core.observability import LIVE_TEXT_WINDOWS
from transcriber.db import reads
from transcriber.db.reads.uploads import Upload
from transcriber.domain.live_text import BYTES_PER_MS, WINDOW_MS, cut_point, joined, silent
from transcriber.domain.shapes_live import LiveTextBody
from transcriber.ports import DecodesSamples, RecognizesSamples
from transcriber.web import keys
from transcriber.web.errors import ApiError
from transcriber.web.identity import current_user
from transcriber.web.openapi_uploads import UPLOAD_ID
from transcriber.web.operations import declare, ok
from transcriber.web.partials import PARTIALS, Partials
from transcriber.web.responses import json_response

log = structlog.get_logger(__name__)

TEXT = "/app/uploads/{id}/text"
TASK_NAME = "live-text"
# A recorder asks every few seconds; one not heard from for this long has stopped.
FORGET_SECONDS = 120.0
# The actor's rest when nothing is wanted (an ask wakes it at once).
IDLE_SECONDS = 30.0


@dataclass(slots=True, kw_only=True)
class _Followed:
    """The actor's own state of one upload it follows (not a message: never shared)."""

    upload_id: str
    owner_id: str
    language: str | None
    asked_at: float
    heard_ms: int = 0
    pieces: list[str] = field(default_factory=list)
    failed: bool = False


class LiveText:
    """The actor: recognizes the wanted uploads' stored audio a window at a time."""

    def __init__(self, *, partials: Partials, transcoder: DecodesSamples,
                 recognizer: RecognizesSamples, clock: Clock) -> None:
        self._partials = partials
        self._transcoder = transcoder
        self._recognizer = recognizer
        self._clock = clock
        self._followed: dict[str, _Followed] = {}
        self._due: list[str] = []
        self._wake = asyncio.Event()

    def ask(self, upload: Upload) -> LiveTextBody:
        """The text so far of `upload` (its owner asking); wanted again from now."""
        now = self._clock.monotonic()
        followed = self._followed.get(upload.id)
        if followed is None:
            # One upload per person: a newer recording replaces the one followed.
            for other in [f for f in self._followed.values() if f.owner_id == upload.owner_id]:
                del self._followed[other.upload_id]
            followed = self._followed[upload.id] = _Followed(
                upload_id=upload.id, owner_id=upload.owner_id,
                language=upload.language, asked_at=now)
        followed.asked_at = now
        if upload.record_id is None and not followed.failed:
            self._want(upload.id)
        return LiveTextBody(available=True, text=joined(followed.pieces),
                            heard_ms=followed.heard_ms, record_id=upload.record_id)

    def _want(self, upload_id: str) -> None:
        if upload_id not in self._due:
            self._due.append(upload_id)
        self._wake.set()

    async def run(self, stopping: asyncio.Event) -> None:
        while not stopping.is_set():
            await rest(self._clock, IDLE_SECONDS, self._wake, stopping)
            self._wake.clear()
            await self.catch_up(stopping)

    async def catch_up(self, stopping: asyncio.Event | None = None) -> None:
        """Recognize every wanted window there is, the uploads taking turns."""
        self._forget_quiet()
        while self._due and (stopping is None or not stopping.is_set()):
            followed = self._followed.get(self._due.pop(0))
            if followed is not None and await self._one_window(followed):
                self._want(followed.upload_id)  # more may be there: back of the line

    def _forget_quiet(self) -> None:
        now = self._clock.monotonic()
        for quiet in [f for f in self._followed.values() if now - f.asked_at > FORGET_SECONDS]:
            del self._followed[quiet.upload_id]

    async def _one_window(self, followed: _Followed) -> bool:
        """The next window recognized, if a whole one is stored; whether one was."""
        path = self._partials.path(followed.upload_id)
        if not path.exists():
            return False  # finished (a record now) or removed
        try:
            pcm = await self._transcoder.samples(path, start_ms=followed.heard_ms,
                                                 length_ms=WINDOW_MS)
        except PermanentFailure:
            followed.failed = True  # not audio this server reads: no preview
            LIVE_TEXT_WINDOWS.labels("unreadable").inc()
            log.info("live_text_unreadable", upload_id=followed.upload_id)
            return False
        except TranscriberError:
            return False  # not now (ffmpeg could not start): the next ask tries again
        cut = cut_point(pcm)
        if cut is None:
            return False
        window = pcm[:cut]
        if silent(window):
            LIVE_TEXT_WINDOWS.labels("silent").inc()
        else:
            try:
                answer = await self._recognizer.recognize_samples(
                    window, language=followed.language)
            except TranscriberError as exc:
                LIVE_TEXT_WINDOWS.labels("failed").inc()
                log.warning("live_text_failed", upload_id=followed.upload_id,
                            error=type(exc).__name__)
                return False  # the next ask tries this window again
            except Exception as exc:
                # A recognizer's unexpected error (a model that cannot load, a bug) ends
                # this upload's preview, logged loudly, never the service: the record
                # the upload becomes is recognized by the pipeline regardless.
                followed.failed = True
                LIVE_TEXT_WINDOWS.labels("failed").inc()
                log.error("live_text_broken", upload_id=followed.upload_id,
                          error=type(exc).__name__)
                return False
            followed.pieces.append(" ".join(u.text for u in answer.utterances))
            LIVE_TEXT_WINDOWS.labels("recognized").inc()
        followed.heard_ms += cut // BYTES_PER_MS
        return True


LIVE_TEXT = web.AppKey("live_text", LiveText)


def setup_live_text(app: web.Application) -> None:
    """The actor, where this process has a recognizer that takes audio in memory and a
    transcoder that decodes it (its task is started by `service/uploads.py`)."""
    # Typed as the ports they may implement besides their own (mypy sees no overlap).
    recognizer: object = app.get(keys.RECOGNIZER, None)
    transcoder: object = app.get(keys.TRANSCODER, None)
    if isinstance(recognizer, RecognizesSamples) and isinstance(transcoder, DecodesSamples):
        app[LIVE_TEXT] = LiveText(partials=app[PARTIALS], transcoder=transcoder,
                                  recognizer=recognizer, clock=app[keys.CLOCK])


@declare("uploadText", "The text so far of an upload going on (a preview while recording)", {
    200: ok("The text so far; the record's id once the upload is finished", LiveTextBody),
    404: "No such upload (or another person's)", 410: "The upload expired",
}, parameters=(UPLOAD_ID,))
async def live_text(request: web.Request) -> web.Response:
    """`GET /app/uploads/{id}/text`: the text so far, and the upload wanted again."""
    owner_id = current_user(request).id
    upload_id = parse_id(request.match_info["id"])
    upload = None if upload_id is None else await reads.uploads.owned(
        request.app[keys.READERS], upload_id=upload_id, owner_id=owner_id)
    if upload is None:
        raise ApiError(404, "not_found", "no such upload")
    if upload.record_id is None and upload.expires_at < stamp(request.app[keys.CLOCK]):
        raise ApiError(410, "upload_expired", "the upload expired; start it again")
    live = request.app.get(LIVE_TEXT)
    if live is None:
        return json_response(LiveTextBody(available=False, text="", heard_ms=0,
                                          record_id=upload.record_id))
    return json_response(live.ask(upload))
