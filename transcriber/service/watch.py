"""The watched folders (docs/watched-folder.md): a new audio file in one of
`watch.dirs` becomes a record of `watch.owner`, through the uploads' own intake.

One actor (`FolderWatcher`), run by the watch duty (one process of the service takes
the files): every look lists each folder (its top level only; `done/` and `failed/`
are folders, never looked into), and `domain.watch.look` says which files have
stayed the same size and time for `watch.stable_seconds`. Such a file is hashed; a
hash remembered in the database (`watched_files`, written in the record's own
transaction) means the file was taken before and the service stopped before moving
it, so it is moved to `done/` without a second record. Otherwise it is streamed
into `pipeline.intake.accept_stream` (the same limits and media checks as an
upload), its bytes hashed again as they go: a file that changed after its first
hash is not taken (it is still being written), and waits again. A taken file moves
to `done/`; one intake refuses moves to `failed/` with the reason in
`failed/<name>.reason.txt`; a passing failure (the writer, ffmpeg busy) leaves it
to the next look.

With `watch.space` (a space's name) the records are filed into that space, in the
record's own transaction, when `watch.owner` may add records there (its editor or
admin). While the space does not exist or the owner may not, the files wait where
they are (`watch_space_refused`, said once, and `space_refused` counted at each
look): a recording never lands outside the space it was meant for, and the files
are taken (after their stable time) once the owner may.

Logs name the folder by its position in `watch.dirs` and the record, never a file's
name.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Literal

import structlog
from aiohttp import web

from transcriber.core.clock import Clock, rest
from transcriber.core.errors import PermanentFailure, TooLarge, TranscriberError
from transcriber.core.hashing import read_chunks, sha256_of
from transcriber.core.observability import WATCH_FILES
from transcriber.db import reads
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.access import AccessAnswer, Action, may_in_space
from transcriber.domain.languages import configured_language
from transcriber.domain.watch import (
    DONE_DIR,
    FAILED_DIR,
    REASON_SUFFIX,
    Seen,
    Watched,
    free_name,
    is_candidate,
    look,
)
from transcriber.pipeline.intake import AudioLimits, EmptyInput, Intake, accept_stream
from transcriber.ports import Duty, RecordFiles, Transcoder
from transcriber.service.duties import DutyWork, duty_ctx
from transcriber.service.fatal import supervised
from transcriber.settings import Settings
from transcriber.web import keys

log = structlog.get_logger(__name__)

TASK_NAME = "folder-watcher"
CHUNK_BYTES = 1024 * 1024
LOOK_SECONDS_MAX = 2.0
"""The longest pause between two looks (a shorter `watch.stable_seconds` halves it)."""


# What intake refuses for good: not audio, too long, too large, empty.
REFUSED = (PermanentFailure, TooLarge, EmptyInput)


class FileChanged(TranscriberError):
    """The file's bytes were not those hashed a moment before: it is still written."""


def scan(folder: Path) -> dict[str, Seen]:
    """The folder's candidate files (top level) by path, with size and time; a folder
    that is missing or unreadable is an empty one (logged by the caller's look)."""
    found: dict[str, Seen] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if not is_candidate(entry.name) or not entry.is_file(follow_symlinks=False):
                continue
            stat = entry.stat(follow_symlinks=False)
            found[entry.path] = Seen(size=stat.st_size, mtime_ns=stat.st_mtime_ns)
    return found


def move_into(path: Path, subfolder: str, *, reason: str | None = None) -> Path:
    """Move the file into `<its folder>/<subfolder>/` under a free name (a reason, when
    given, written beside it first)."""
    target_dir = path.parent / subfolder
    target_dir.mkdir(exist_ok=True)
    target = target_dir / free_name(path.name, os.listdir(target_dir))
    if reason is not None:
        (target_dir / (target.name + REASON_SUFFIX)).write_text(reason + "\n", encoding="utf-8")
    path.rename(target)
    return target


class FolderWatcher:
    """The actor: `run(stopping)` looks at the folders until told to stop."""

    def __init__(self, *, settings: Settings, writer: Writer, readers: ReaderPool,
                 files: RecordFiles, transcoder: Transcoder, clock: Clock) -> None:
        self._settings = settings
        self._folders = tuple(Path(folder) for folder in settings.watch.dirs)
        self._writer = writer
        self._readers = readers
        self._files = files
        self._transcoder = transcoder
        self._clock = clock
        self._watching: dict[Path, Mapping[str, Watched]] = {}
        self._owner_id: str | None = None
        self._unreadable: set[Path] = set()
        self._space_refused = False

    @property
    def pause_seconds(self) -> float:
        return min(LOOK_SECONDS_MAX, self._settings.watch.stable_seconds / 2)

    async def run(self, stopping: asyncio.Event) -> None:
        while not stopping.is_set():
            await self.look_once()
            await rest(self._clock, self.pause_seconds, stopping)

    async def look_once(self) -> int:
        """One look at every folder; answers how many files became records."""
        taken = 0
        space_id = await self._space()
        if space_id is False:
            return 0
        for index, folder in enumerate(self._folders):
            try:
                found = await asyncio.to_thread(scan, folder)
            except OSError as exc:
                if folder not in self._unreadable:  # said once, not at every look
                    self._unreadable.add(folder)
                    log.warning("watch_folder_unreadable", folder=index,
                                error=type(exc).__name__)
                continue
            self._unreadable.discard(folder)
            result = look(self._watching.get(folder, {}), found, now=self._clock.monotonic(),
                          stable_seconds=self._settings.watch.stable_seconds)
            watching = dict(result.watching)
            for path in result.ready:
                outcome = await self._take(Path(path), index=index, space_id=space_id)
                taken += outcome == "taken"
                if outcome == "again":
                    watching.pop(path, None)  # waits its stable time once more
            self._watching[folder] = watching
        return taken

    async def _owner(self) -> str:
        if self._owner_id is None:
            login = self._settings.watch.owner
            user = await self._writer.ask(EnsureUser(login=login, display_name=login))
            self._owner_id = user.id
        return self._owner_id

    async def _space(self) -> str | Literal[False] | None:
        """The id of `watch.space` (None: no space set), or False while the owner may not
        add records there (refused: the files wait)."""
        name = self._settings.watch.space
        if not name:
            return None
        space = await reads.access.space_by_name(self._readers, name=name)
        role = None if space is None else await reads.access.role_in_space(
            self._readers, space_id=space.id, user_id=await self._owner())
        if space is None or may_in_space(Action.MOVE, role) is not AccessAnswer.ALLOWED:
            WATCH_FILES.labels(outcome="space_refused").inc()
            if not self._space_refused:  # said once, not at every look
                self._space_refused = True
                log.warning("watch_space_refused", exists=space is not None)
            return False
        if self._space_refused:
            self._space_refused = False
            log.info("watch_space_allowed", space_id=space.id)
        return space.id

    async def _take(self, path: Path, *, index: int, space_id: str | None) -> str:
        """`taken`, `seen` (taken before), `failed`, or `again` (left for a later look)."""
        try:
            sha256 = await asyncio.to_thread(sha256_of, path)
        except OSError as exc:
            log.warning("watch_file_unreadable", folder=index, error=type(exc).__name__)
            return "again"
        before = await reads.watch.taken(self._readers, sha256=sha256)
        if before is not None:
            # Taken before the service stopped (or dropped in again): never a second record.
            await self._move(path, DONE_DIR, index=index)
            WATCH_FILES.labels(outcome="seen").inc()
            log.info("watch_file_seen", folder=index, record_id=before.record_id)
            return "seen"
        try:
            record_id = await self._accept(path, sha256, space_id)
        except FileChanged:
            WATCH_FILES.labels(outcome="changed").inc()
            log.info("watch_file_changed", folder=index)
            return "again"
        except REFUSED as exc:
            await self._move(path, FAILED_DIR, index=index,
                             reason=str(exc) or type(exc).__name__)
            WATCH_FILES.labels(outcome="failed").inc()
            log.info("watch_file_failed", folder=index, error=type(exc).__name__)
            return "failed"
        except TranscriberError as exc:
            WATCH_FILES.labels(outcome="retried").inc()
            log.warning("watch_file_retried", folder=index, error=type(exc).__name__)
            return "again"
        await self._move(path, DONE_DIR, index=index)
        WATCH_FILES.labels(outcome="taken").inc()
        log.info("watch_file_taken", folder=index, record_id=record_id)
        return "taken"

    async def _accept(self, path: Path, sha256: str, space_id: str | None) -> str:
        server = self._settings.server
        digest = hashlib.sha256()

        async def hashed() -> AsyncIterator[bytes]:
            async for chunk in read_chunks(path, CHUNK_BYTES):
                digest.update(chunk)
                yield chunk

        def checked(intake: Intake) -> Intake:
            # The stream has ended: the bytes stored must be the bytes hashed.
            if digest.hexdigest() != sha256:
                raise FileChanged("the file changed while it was read")
            return intake

        intake = Intake(owner_id=await self._owner(), original_name=path.name, via="folder",
                        watched_sha256=sha256, space_id=space_id,
                        language=configured_language(self._settings.recognizer.language))
        accepted = await accept_stream(
            intake, hashed(), files=self._files, writer=self._writer,
            transcoder=self._transcoder, limit=server.upload_max_bytes,
            # The operator's own folder: no queue quota, as `transcriber transcribe`.
            limits=dataclasses.replace(AudioLimits.of(server), queued_max_seconds=0),
            late=checked)
        return accepted.record_id

    async def _move(self, path: Path, subfolder: str, *, index: int,
                    reason: str | None = None) -> None:
        try:
            await asyncio.to_thread(move_into, path, subfolder, reason=reason)
        except OSError as exc:
            # Not fatal: the hash keeps a taken file from a second record at the next look.
            log.warning("watch_file_not_moved", folder=index, error=type(exc).__name__)


def watch_work(app: web.Application) -> DutyWork | None:
    """The watch duty's work, or None when no folder is watched."""
    settings = app[keys.SETTINGS]
    if not settings.watch.dirs:
        return None

    @contextlib.asynccontextmanager
    async def work() -> AsyncIterator[None]:
        watcher = FolderWatcher(settings=settings, writer=app[keys.WRITER],
                                readers=app[keys.READERS], files=app[keys.FILES],
                                transcoder=app[keys.TRANSCODER], clock=app[keys.CLOCK])
        async with supervised(app, watcher.run, name=TASK_NAME, died="folder_watcher_died",
                              grace_seconds=settings.server.shutdown_forced_seconds):
            yield

    return work


watch_ctx = duty_ctx(Duty.WATCH, watch_work)
