"""`transcriber upload FILE… --server URL`: a client of a transcriber server.

Nothing of the service runs here: each file streams to `POST
/app/audiorecords` (the raw body with its size, a progress bar on a
terminal; a file of 64 MiB or more goes in pieces through the resumable
protocol, `cli/resumable.py`, and continues after a dropped connection),
authenticated by a personal access token (`--token`, or
`TRANSCRIBER_TOKEN`, which keeps it out of the process list). With `--wait`
every record is followed to done through its card, as often as the card's
`poll_after_ms` allows (within 0.5–30 s), showing its `progress`; then its
transcript is written to `--output DIR` (`<name>.<format>`, see
`cli/outputs.py`) or printed. A busy server (429, 503 with `Retry-After`) is
waited for; an answer that is neither is said and counted.

The server is trusted with nothing (`cli/answers.py`): each answer must arrive
whole within `--timeout`, a transcript or card within `--max-transcript-mib`,
redirects stay within the server's origin, and everything printed of it goes
through `cli/shown.py`. A token is not sent over plain `http://` to another
machine without `--insecure`.

Exit codes: 0 every file uploaded (and, with `--wait`, done); 1 some file
refused, its record halted or deleted, or its transcript not written; 2 bad
usage (argparse's own, no server, a missing file, an output that exists, a
clear-text token); 3 the server cannot be reached, answered too slowly or
refused the token (401, 403); 4 an answer broke the client's rules; 70 the
client itself failed (one line naming the error's class). Client
settings are documented apart from the server's (docs/api.md, "The
command-line client").
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Never, TextIO
from urllib.parse import urlsplit

import aiohttp
from tqdm import tqdm
from yarl import URL

from transcriber import __version__
from transcriber.cli import outputs, resumable
from transcriber.cli.answers import (
    DEFAULT_POLL_SECONDS,
    MIB,
    BadServerAnswer,
    Bounds,
    Card,
    Unreachable,
    clear_text_host,
    error_message,
    record_id,
    retry_seconds,
)
from transcriber.cli.exchange import TRIES, Body, Link
from transcriber.cli.exits import (
    EXIT_BAD_ANSWER,
    EXIT_CONFIG,
    EXIT_FATAL,
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
)
from transcriber.cli.shown import shown, shown_lines, tell
from transcriber.cli.texts import say
from transcriber.domain.transcript_formats import BINARY_FORMATS
from transcriber.settings import CLIENT_ENV, Settings

# TRANSCRIBER_SERVER_URL, TRANSCRIBER_TOKEN: the client's, not the server's settings.
SERVER_ENV, TOKEN_ENV = CLIENT_ENV
# An upload refused for now is sent again (TRIES in all) on the server's own "nothing
# stored, come back" only (a proxy's 502/504 after a POST may hide a record that landed).
BUSY_UPLOAD = frozenset({429, 503})
# The upload's own answer (the new record) is small; a card can carry a transcript.
CREATED_MAX_BYTES = MIB


@dataclass(frozen=True, slots=True, kw_only=True)
class Client:
    server: str
    token: str | None
    language: str | None
    wait: bool
    fmt: str
    output: Path | None
    force: bool = False
    insecure: bool = False
    bounds: Bounds = field(default_factory=Bounds)
    space: str | None = None
    """The space the records go into (docs/sharing.md); None: the person's default."""


@dataclass(slots=True)
class Item:
    path: Path
    record_id: str | None = None
    outcome: str = "pending"  # uploaded, refused, done, halted, deleted, bad_answer, unwritten
    shown: str = ""
    transcript: str | None = field(default=None, repr=False)
    document: bytes | None = field(default=None, repr=False)
    """A transcript that is not text (`BINARY_FORMATS`): written as it came, never shown."""


def client_of(args: argparse.Namespace, environ: Mapping[str, str]) -> Client | str:
    """Pure: the client's settings from its flags and variables, or what is wrong."""
    server = (args.server or environ.get(SERVER_ENV, "")).strip().rstrip("/")
    if not server:
        return say("upload.no_server")
    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return say("upload.bad_server", url=shown(server))
    for path in args.files:
        if not path.is_file():
            return say("upload.no_file", path=shown(path))
    if args.output is not None and not args.output.is_dir():
        return say("upload.output_not_dir", path=shown(args.output))
    token = (args.token or environ.get(TOKEN_ENV, "")).strip() or None
    return Client(server=server, token=token, language=args.language, wait=args.wait,
                  fmt=args.format, output=args.output, force=args.force,
                  insecure=args.insecure, space=getattr(args, "space", None),
                  bounds=Bounds(timeout_seconds=args.timeout,
                                transcript_max_bytes=args.max_transcript_mib * MIB))


async def _send(link: Link, client: Client, item: Item) -> None:
    """One file to the server; its record id, or `refused` with the server's reason."""
    try:
        size = item.path.stat().st_size
    except OSError as exc:
        item.outcome = "refused"
        tell(link.err, "upload.unreadable", name=item.path.name, reason=exc.strerror)
        return
    if size >= resumable.RESUMABLE_MIN_BYTES and await _send_resumable(link, client, item,
                                                                        size):
        return
    url = URL(f"{client.server}/app/audiorecords")
    if client.language:
        url = url.update_query(language=client.language)
    if client.space is not None:
        url = url.update_query(space=client.space)
    for attempt in range(TRIES):
        answer = await link.exchange(url, body=Body(item.path, size, link.err),
                                     cap=CREATED_MAX_BYTES)
        if answer.status in BUSY_UPLOAD and attempt + 1 < TRIES:
            await asyncio.sleep(retry_seconds(answer.retry_after, attempt))
            continue
        if answer.status != 201:
            item.outcome = "refused"
            tell(link.err, "upload.refused", name=item.path.name, status=answer.status,
                 message=error_message(answer.body, answer.reason))
            return
        item.record_id = record_id(answer.body or b"")
        item.outcome = "uploaded"
        tell(link.err, "upload.uploaded", name=item.path.name, id=item.record_id)
        return


async def _send_resumable(link: Link, client: Client, item: Item, size: int) -> bool:
    """A large file in pieces (`cli/resumable.py`): a dropped connection costs one piece.
    False when the server has no resumable uploads (the file goes in one request)."""
    outcome = await resumable.send(link.session, link.server, item.path, size,
                                   language=client.language, space=client.space,
                                   timeout_seconds=client.bounds.timeout_seconds, err=link.err)
    if outcome.unsupported:
        return False
    if outcome.record_id is None:
        item.outcome = "refused"
        tell(link.err, "upload.refused", name=item.path.name, status=outcome.status,
             message=outcome.message)
        return True
    item.record_id = outcome.record_id
    item.outcome = "uploaded"
    tell(link.err, "upload.uploaded", name=item.path.name, id=item.record_id)
    return True


def progress_line(name: str, card: Card) -> str:
    """Pure: a record's line while `--wait` follows it (stage, parts, share, time left);
    `name` is already made safe to print."""
    if card.progress is not None:
        return say("upload.progress", name=name, stage=shown(card.progress.stage),
                   done=card.progress.done, total=card.progress.total,
                   percent=int(card.progress.fraction * 100),
                   eta=time_left(card.progress.eta_seconds))
    return say("upload.stage", name=name, stage=shown(card.stage))


def time_left(eta_seconds: float | None) -> str:
    """Pure: the card's `eta_seconds` in words, `, about 3 min left` (empty without one).
    Whole minutes, as the web card says it: the line changes when the estimate does."""
    if eta_seconds is None:
        return ""
    if eta_seconds < 60:
        left = say("upload.eta_under_minute")
    else:
        hours, minutes = divmod(round(eta_seconds / 60), 60)
        left = say("upload.eta_hours", hours=hours, minutes=minutes) if hours \
            else say("upload.eta_minutes", minutes=minutes)
    return say("upload.eta", left=left)


async def _follow(link: Link, client: Client, item: Item) -> None:
    """Poll the record's card until it is done, halted or gone; then read its transcript."""
    record = f"{client.server}/app/audiorecords/{item.record_id}"
    cap = client.bounds.transcript_max_bytes
    bar: tqdm[Never] = tqdm(total=100, desc=shown(item.path.name), unit="%", file=link.err,
                            disable=not link.err.isatty(), leave=False)
    try:
        while True:
            answer = await link.get(record, cap)
            if answer.status == 404:
                item.outcome = "deleted"
                tell(link.err, "upload.deleted", name=item.path.name)
                return
            if answer.status != 200:
                item.outcome = "refused"
                tell(link.err, "upload.refused", name=item.path.name, status=answer.status,
                     message=error_message(answer.body, answer.reason))
                return
            card = Card.from_body(answer.body or b"")
            if card.halt_reason is not None:
                item.outcome = "halted"
                tell(link.err, "upload.halted", name=item.path.name, reason=card.halt_reason,
                     message=card.halt_message)
                return
            # Done and settled: the card stops asking to be polled once the record's
            # description is written too, so the transcript carries its title.
            if card.stage == "done" and card.poll_seconds is None:
                break
            line = progress_line(shown(item.path.name), card)
            if link.err.isatty():
                bar.n = round((card.progress.fraction if card.progress else 0.0) * 100)
                bar.set_postfix_str(shown(card.progress.stage if card.progress
                                          else card.stage)
                                    + time_left(card.progress.eta_seconds if card.progress
                                                else None))
            elif line != item.shown:
                print(line, file=link.err)
            item.shown = line
            await asyncio.sleep(DEFAULT_POLL_SECONDS if card.poll_seconds is None
                                else card.poll_seconds)
    finally:
        bar.close()
    answer = await link.get(f"{record}/transcript?format={client.fmt}", cap)
    if answer.status != 200:
        item.outcome = "refused"
        tell(link.err, "upload.refused", name=item.path.name, status=answer.status,
             message=error_message(answer.body, answer.reason))
        return
    item.outcome = "done"
    if client.fmt in BINARY_FORMATS:
        item.document = answer.body or b""
        item.transcript = ""
    else:
        item.transcript = shown_lines((answer.body or b"").decode("utf-8", errors="replace"))
    tell(link.err, "upload.done", name=item.path.name)


async def _judged(step: Callable[[], Awaitable[None]], item: Item, err: TextIO) -> None:
    """Run one file's step; an answer that breaks the client's rules fails that file
    alone (one line), the others go on."""
    try:
        await step()
    except BadServerAnswer as exc:
        item.outcome = "bad_answer"
        tell(err, "upload.bad_answer", name=item.path.name, problem=str(exc))


def _deliver(items: list[Item], client: Client, targets: Mapping[int, Path],
             out: TextIO, err: TextIO) -> None:
    """Write each transcript to its planned name (`cli/outputs.py`), or print them
    (headed when several)."""
    done = [(position, item) for position, item in enumerate(items)
            if item.transcript is not None]
    for position, item in done:
        assert item.transcript is not None
        if client.output is not None:
            target = targets[position]
            try:
                outputs.write(target, item.transcript if item.document is None
                              else item.document, force=client.force)
            except OSError as exc:
                item.outcome = "unwritten"
                tell(err, "upload.unwritten", name=item.path.name, path=target,
                     reason=exc.strerror or type(exc).__name__)
                continue
            tell(err, "upload.written", name=item.path.name, path=target)
            continue
        if len(done) > 1:
            out.write(f"==> {shown(item.path.name)} <==\n")
        out.write(item.transcript if item.transcript.endswith("\n")
                  else item.transcript + "\n")


def _refusal(client: Client, paths: list[Path], err: TextIO) -> dict[int, Path] | None:
    """What must be settled before a byte is sent: the output names (none may exist
    without --force) and a token in clear text; None when the run must not start."""
    if client.wait and client.output is None and client.fmt in BINARY_FORMATS:
        print(f"transcriber: {say('upload.binary_needs_output', format=client.fmt)}",
              file=err)
        return None
    host = clear_text_host(client.server, client.token)
    if host is not None:
        if not client.insecure:
            print(f"transcriber: {say('upload.clear_text_token', host=shown(host))}", file=err)
            return None
        tell(err, "upload.clear_text_warning", host=host)
    if client.output is None or not client.wait:
        return {}
    targets = outputs.output_names(paths, client.output, client.fmt, force=client.force)
    if isinstance(targets, str):
        print(f"transcriber: {targets}", file=err)
        return None
    return targets


async def upload(client: Client, paths: list[Path], *, out: TextIO, err: TextIO) -> int:
    targets = _refusal(client, paths, err)
    if targets is None:
        return EXIT_CONFIG
    items = [Item(path=path) for path in paths]
    # The server shows its records as the command line's (web/upload.py, CLI_USER_AGENT).
    headers = {"Accept": "application/json", "Accept-Encoding": "identity",
               "User-Agent": f"transcriber-cli/{__version__}"}
    if client.token:
        headers["Authorization"] = f"Bearer {client.token}"
    # No total limit of aiohttp's: each answer has its own deadline (`Link.once`), and a
    # large file takes as long as it takes while its chunks keep moving.
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=15)
    try:
        async with aiohttp.ClientSession(headers=headers, timeout=timeout,
                                         auto_decompress=False) as session:
            link = Link(session=session, server=URL(client.server), bounds=client.bounds,
                        err=err)
            for item in items:
                await _judged(partial(_send, link, client, item), item, err)
            if client.wait:
                await asyncio.gather(*(_judged(partial(_follow, link, client, item), item, err)
                                       for item in items if item.outcome == "uploaded"))
    except Unreachable as exc:
        print(shown(exc, limit=1000), file=err)
        return EXIT_UNREACHABLE
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        tell(err, "upload.unreachable", url=client.server, reason=type(exc).__name__)
        return EXIT_UNREACHABLE
    _deliver(items, client, targets, out, err)
    if not client.wait:
        for item in items:
            if item.record_id is not None:
                out.write(f"{item.record_id}\t{item.path}\n")
    if any(item.outcome == "bad_answer" for item in items):
        return EXIT_BAD_ANSWER
    good = "done" if client.wait else "uploaded"
    return 0 if all(item.outcome == good for item in items) else EXIT_REFUSED


def run(args: argparse.Namespace, settings: Settings) -> int:
    del settings  # a client: the server's settings are the server's
    client = client_of(args, os.environ)
    if isinstance(client, str):
        print(f"transcriber: {client}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        return asyncio.run(upload(client, list(args.files), out=sys.stdout, err=sys.stderr))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last guard: one line, never a traceback
        tell(sys.stderr, "upload.unexpected", kind=type(exc).__name__)
        return EXIT_FATAL
