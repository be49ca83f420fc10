"""`transcriber transcribe FILE...`: the archive and the pipeline, in-process, for a terminal.

The files are accepted into the local archive exactly as uploads are (the
shared intake), the service's own step actors run the pipeline until every
record is `done` or halted, and the transcripts are printed in the chosen
format. On a terminal a progress line per file shows its stage and the
time spent, with a progress bar and the ETA while it is normalized and
recognized; off a terminal a plain line per file is written whenever its stage
or its parts done change. Exit 1 when any file could not be accepted or its
record halted.

The spoken language is `--language` (what the upload door accepts: `auto` or a code
the recognizer knows), else the `recognizer.language` setting, as for an upload that
names none.

Speakers are told apart exactly as for an upload (`recognizer.diarization`,
or `--diarization`; `--speakers N` is the uploader's count), and printed as
the exports print them: `S1: text` lines, SRT `S1: ` cues, WebVTT `<v S1>`,
JSON `speaker` and `speaker_name`, when a recording has several.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from aiohttp import web

from transcriber.core.clock import Clock
from transcriber.core.errors import StepFailure, TranscriberError
from transcriber.core.hashing import read_chunks
from transcriber.db import reads
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.domain.documents import render_bytes
from transcriber.domain.languages import checked_language, configured_language, supported_languages
from transcriber.domain.stages import Stage
from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.pipeline.intake import AudioLimits, Intake, accept_stream
from transcriber.pipeline.progress import Progress, progress_for_row
from transcriber.ports import Recognizer, Warms
from transcriber.providers.recognizers import capabilities_of
from transcriber.service.app import build_app
from transcriber.settings import Settings
from transcriber.web import keys

DEFAULT_OWNER = "local"
POLL_SECONDS = 0.25
BAR_WIDTH = 20
_CHUNK = 1024 * 1024


@dataclass(slots=True)
class Tracked:
    path: Path
    record_id: str | None = None
    stage: str = "accepting"
    halted: str | None = None
    refused: str | None = None
    started: float = 0.0
    finished: float | None = None
    progress: Progress | None = None
    # The last plain line written for this file (off a terminal: only changes are written).
    shown: str = ""

    @property
    def settled(self) -> bool:
        return self.refused is not None or self.halted is not None or self.stage == "done"


async def transcribe(
    settings: Settings,
    paths: Sequence[Path],
    *,
    fmt: TranscriptFormat = "txt",
    owner: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    clock: Clock | None = None,
    app: web.Application | None = None,
    recognizer: Recognizer | None = None,
    speakers: int | None = None,
    diarization: str | None = None,
    language: str | None = None,
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    known = capabilities_of(recognizer, settings).languages
    # A record that names no language is stored with the setting's, as an upload is
    # (Intake's own default, `auto`, would make the recognizer detect it instead).
    stored = checked_language(known, language if language is not None
                              else configured_language(settings.recognizer.language))
    if stored is None:
        print("transcriber: --language must be one of: "
              + ", ".join(supported_languages(known)), file=err)
        return 2
    # `--diarization` overrides the `recognizer.diarization` setting; both keep their
    # user-facing name (a contract), though the code calls the concept "speakers".
    if diarization is not None:
        settings = dataclasses.replace(settings, recognizer=dataclasses.replace(
            settings.recognizer, diarization=diarization))
    if settings.pipeline.workers < 1:
        settings = dataclasses.replace(
            settings, pipeline=dataclasses.replace(settings.pipeline, workers=1))
    # Replies to Telegram records it finishes are written for the service to send; it
    # never polls for messages.
    app = app or build_app(settings, clock=clock, recognizer=recognizer, one_shot=True)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()  # storage, providers and the step actors start here
    # The model loads while the files are accepted and normalized (ffmpeg takes one
    # core), not after: the first recognition would otherwise wait for it.
    warming = _warm(app.get(keys.RECOGNIZER))
    try:
        tracked = [Tracked(path=path, started=time.monotonic()) for path in paths]
        login = owner or settings.server.anonymous_user or DEFAULT_OWNER
        user = await app[keys.WRITER].ask(EnsureUser(login=login, display_name=login))
        for item in tracked:
            await _accept(app, settings, item, owner_id=user.id, speakers=speakers,
                          language=stored)
        await _wait(app, tracked, err=err)
        return await _report(app[keys.READERS], tracked, fmt=fmt, out=out, err=err)
    finally:
        if warming is not None:
            warming.cancel()  # a started load finishes in its thread; nothing waits on it
            await asyncio.gather(warming, return_exceptions=True)
        await runner.cleanup()


def _warm(recognizer: Recognizer | None) -> asyncio.Task[None] | None:
    """The recognizer's model loading in a task of its own, where it has one to load."""
    candidate: object = recognizer  # `Warms` is a port of its own beside `Recognizer`
    if not isinstance(candidate, Warms):
        return None
    return asyncio.create_task(candidate.warm(), name="recognizer-warm")


async def _accept(app: web.Application, settings: Settings, item: Tracked, *,
                  owner_id: str, speakers: int | None = None,
                  language: str = "auto") -> None:
    if not await asyncio.to_thread(item.path.is_file):
        item.refused = "no such file"
        item.finished = time.monotonic()
        return
    try:
        accepted = await accept_stream(
            Intake(owner_id=owner_id, original_name=item.path.name, speakers=speakers,
                   language=language, via="cli"),
            read_chunks(item.path, _CHUNK),
            files=app[keys.FILES], writer=app[keys.WRITER], transcoder=app[keys.TRANSCODER],
            limit=settings.server.upload_max_bytes,
            # No queue quota: the operator's own command on files of this machine.
            limits=dataclasses.replace(AudioLimits.of(settings.server), queued_max_seconds=0),
        )
    except StepFailure as exc:
        item.refused = exc.reason
        item.finished = time.monotonic()
        return
    except TranscriberError as exc:
        item.refused = str(exc) or type(exc).__name__
        item.finished = time.monotonic()
        return
    item.record_id = accepted.record_id
    item.stage = Stage.UPLOADED.value


async def _wait(app: web.Application, tracked: list[Tracked], *, err: TextIO) -> None:
    readers, fatal, settings = app[keys.READERS], app[keys.FATAL], app[keys.SETTINGS]
    live = err.isatty()
    while True:
        for item in tracked:
            if item.record_id is None or item.finished is not None:
                continue
            record = await reads.records.state(readers, record_id=item.record_id)
            if record is None:
                continue
            item.stage = record.state
            if record.halted_at is not None:
                item.halted = f"{record.halt_reason}: {record.error_text or ''}".rstrip(": ")
            item.progress = await progress_for_row(
                readers, record, settings=settings, now=app[keys.CLOCK].now(),
                capabilities=capabilities_of(app.get(keys.RECOGNIZER), settings))
            if item.settled:
                item.finished = time.monotonic()
        if live:
            _redraw(tracked, err)
        else:
            _plain(tracked, err)
        if all(item.settled for item in tracked):
            return
        if fatal.done():
            raise RuntimeError("the service stopped while transcribing")
        await asyncio.sleep(POLL_SECONDS)


def _state(item: Tracked) -> str:
    if item.refused is not None:
        return f"refused ({item.refused})"
    if item.halted is not None:
        return f"halted ({item.halted})"
    return item.stage


def bar(progress: Progress | None, *, width: int = BAR_WIDTH) -> str:
    """Pure: `[#####.....]  50% 3/6 ETA 1m05s` (blank without progress)."""
    if progress is None:
        return ""
    filled = round(progress.fraction * width)
    eta = "" if progress.eta_seconds is None else f" ETA {_duration(progress.eta_seconds)}"
    return (f"[{'#' * filled}{'.' * (width - filled)}] {progress.fraction:4.0%} "
            f"{progress.done}/{progress.total}{eta}")


def _duration(seconds: int) -> str:
    minutes, seconds = divmod(max(seconds, 0), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def _redraw(tracked: list[Tracked], err: TextIO) -> None:
    now = time.monotonic()
    lines = []
    for item in tracked:
        elapsed = (item.finished or now) - item.started
        lines.append(f"{item.path.name[:32]:<32} {_state(item):<16} {elapsed:7.1f} s "
                     f"{bar(item.progress)}".rstrip())
    # Redraw the block in place: move up over the previous draw, clear each line.
    err.write("".join(f"\r\x1b[2K{line}\n" for line in lines))
    if not all(item.settled for item in tracked):
        err.write(f"\x1b[{len(lines)}A")
    err.flush()


def _plain(tracked: list[Tracked], err: TextIO) -> None:
    """Off a terminal: one line per file whenever its stage or parts done change."""
    for item in tracked:
        progress = item.progress
        line = f"{item.path.name}: {_state(item)}"
        if progress is not None:
            line += f" {progress.stage} {progress.done}/{progress.total} {progress.fraction:.0%}"
        if line != item.shown:
            item.shown = line
            eta = "" if progress is None or progress.eta_seconds is None \
                else f" ETA {_duration(progress.eta_seconds)}"
            err.write(line + eta + "\n")
    err.flush()


async def _report(readers: ReaderPool, tracked: list[Tracked], *, fmt: TranscriptFormat,
                  out: TextIO, err: TextIO) -> int:
    failed = False
    done = [item for item in tracked if item.stage == "done" and item.halted is None]
    for item in tracked:
        if item.refused is not None:
            failed = True
            print(f"transcriber: {item.path.name}: refused: {item.refused}", file=err)
        elif item.halted is not None:
            failed = True
            print(f"transcriber: {item.path.name}: halted ({item.halted}); "
                  f"record {item.record_id}", file=err)
    for item in done:
        utterances = None if item.record_id is None else await reads.transcripts.utterances(
            readers, record_id=item.record_id, original=True)
        utterances = utterances or []
        report = None if item.record_id is None else await reads.records.quality(
            readers, record_id=item.record_id)
        if len(tracked) > 1:
            out.write(f"==> {item.path.name} <==\n")
        # JSON carries the quality report beside the utterances, as the archive's export.
        out.write(render_bytes(utterances, fmt, quality=None if report is None
                               else report.as_dict()).decode())
        if len(tracked) > 1 or fmt != "txt":
            out.write("\n")
    out.flush()
    return 1 if failed else 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(transcribe(settings, args.files, fmt=args.format, owner=args.owner,
                                  speakers=args.speakers, diarization=args.diarization,
                                  language=args.language))
