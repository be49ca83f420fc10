"""`transcriber upload FILE… --server URL`: a client of a transcriber server.

Nothing of the service runs here: each file streams to `POST
/app/audiorecords` (the raw body with its size, a progress bar on a
terminal), authenticated by a personal access token (`--token`, or
`TRANSCRIBER_TOKEN`, which keeps it out of the process list). With `--wait`
every record is followed to done through its card, as often as the card's
`poll_after_ms` allows, showing its `progress`; then its transcript is
written to `--output DIR` (`<name>.<format>`) or printed. A busy server
(429, 503 with `Retry-After`) is waited for; an answer that is neither is
said and counted.

Exit codes: 0 every file uploaded (and, with `--wait`, done); 1 some file
refused or its record halted or deleted; 2 bad usage (argparse's own, no
server, a missing file); 3 the server cannot be reached or refused the
token (401, 403). Client settings are documented apart from the server's
(docs/api.md, "The command-line client").
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Never, TextIO
from urllib.parse import quote, urlsplit

import aiohttp
import orjson
from tqdm import tqdm

from transcriber.cli.exits import EXIT_CONFIG, EXIT_REFUSED, EXIT_UNREACHABLE
from transcriber.cli.texts import say
from transcriber.settings import CLIENT_ENV, Settings

# TRANSCRIBER_SERVER_URL, TRANSCRIBER_TOKEN: the client's, not the server's settings.
SERVER_ENV, TOKEN_ENV = CLIENT_ENV
CHUNK_BYTES = 1024 * 1024
# A busy or briefly failing server is asked again this many times (Retry-After honoured).
TRIES = 6
RETRY_CAP_SECONDS = 60.0
DEFAULT_POLL_MS = 4000
# Asked again: the server's own "nothing stored, come back" (an upload), and a
# proxy's trouble too for a read (a POST that timed out at a proxy may have landed).
_BUSY_UPLOAD = frozenset({429, 503})
_BUSY = frozenset({429, 502, 503, 504})


@dataclass(frozen=True, slots=True, kw_only=True)
class Client:
    server: str
    token: str | None
    language: str | None
    wait: bool
    fmt: str
    output: Path | None


@dataclass(slots=True)
class Item:
    path: Path
    record_id: str | None = None
    outcome: str = "pending"  # uploaded, refused, done, halted, deleted
    shown: str = ""
    transcript: str | None = field(default=None, repr=False)


class Unreachable(Exception):
    """The server cannot be reached, or it refused the credentials: exit 3."""


def client_of(args: argparse.Namespace, environ: Mapping[str, str]) -> Client | str:
    """Pure: the client's settings from its flags and variables, or what is wrong."""
    server = (args.server or environ.get(SERVER_ENV, "")).strip().rstrip("/")
    if not server:
        return say("upload.no_server")
    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return say("upload.bad_server", url=server)
    for path in args.files:
        if not path.is_file():
            return say("upload.no_file", path=path)
    if args.output is not None and not args.output.is_dir():
        return say("upload.output_not_dir", path=args.output)
    token = (args.token or environ.get(TOKEN_ENV, "")).strip() or None
    return Client(server=server, token=token, language=args.language, wait=args.wait,
                  fmt=args.format, output=args.output)


def _retry_after(response: aiohttp.ClientResponse, attempt: int) -> float:
    try:
        seconds = float(response.headers.get("Retry-After", ""))
    except ValueError:
        seconds = 2.0 ** attempt
    return min(max(seconds, 0.5), RETRY_CAP_SECONDS)


async def _message(response: aiohttp.ClientResponse) -> str:
    """The server's own words (`{"error": {"message"}}`), else its status line."""
    try:
        body = orjson.loads(await response.read())
        return str(body["error"]["message"])
    except (orjson.JSONDecodeError, KeyError, TypeError, aiohttp.ClientError):
        return response.reason or ""


async def _refuse_auth(response: aiohttp.ClientResponse) -> Never:
    raise Unreachable(say("upload.refused_auth", status=response.status,
                          message=await _message(response)))


async def _chunks(path: Path, bar: tqdm[Never]) -> AsyncIterator[bytes]:
    with path.open("rb") as handle:
        while chunk := await asyncio.to_thread(handle.read, CHUNK_BYTES):
            bar.update(len(chunk))
            yield chunk


async def _send(session: aiohttp.ClientSession, client: Client, item: Item,
                err: TextIO) -> None:
    """One file to the server; its record id, or `refused` with the server's reason."""
    size = item.path.stat().st_size
    headers = {"Content-Type": "application/octet-stream", "Content-Length": str(size),
               "X-Filename": quote(item.path.name)}
    params = {"language": client.language} if client.language else {}
    for attempt in range(TRIES):
        bar: tqdm[Never] = tqdm(total=size, desc=item.path.name, unit="B", unit_scale=True,
                                unit_divisor=1024, file=err, disable=not err.isatty(),
                                leave=False)
        try:
            async with session.post(f"{client.server}/app/audiorecords",
                                    data=_chunks(item.path, bar), headers=headers,
                                    params=params) as response:
                if response.status in (401, 403):
                    await _refuse_auth(response)
                if response.status in _BUSY_UPLOAD and attempt + 1 < TRIES:
                    await asyncio.sleep(_retry_after(response, attempt))
                    continue
                if response.status != 201:
                    item.outcome = "refused"
                    print(say("upload.refused", name=item.path.name, status=response.status,
                              message=await _message(response)), file=err)
                    return
                item.record_id = str(orjson.loads(await response.read())["id"])
        finally:
            bar.close()
        item.outcome = "uploaded"
        print(say("upload.uploaded", name=item.path.name, id=item.record_id), file=err)
        return


async def _get(session: aiohttp.ClientSession, url: str, err: TextIO) -> tuple[int, bytes]:
    """GET with patience: a busy server is asked again; a lost connection too, a few
    times, before the server counts as unreachable."""
    for attempt in range(TRIES):
        try:
            async with session.get(url) as response:
                if response.status in (401, 403):
                    await _refuse_auth(response)
                if response.status in _BUSY and attempt + 1 < TRIES:
                    if response.status != 429:
                        print(say("upload.server_trouble", status=response.status), file=err)
                    await asyncio.sleep(_retry_after(response, attempt))
                    continue
                return response.status, await response.read()
        except (aiohttp.ClientConnectionError, TimeoutError):
            if attempt + 1 == TRIES:
                raise
            await asyncio.sleep(min(2.0 ** attempt, RETRY_CAP_SECONDS))
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def time_left(eta_seconds: object) -> str:
    """Pure: the card's `eta_seconds` in words, `, about 3 min left` (empty without one).
    Whole minutes, as the web card says it: the line changes when the estimate does."""
    if not isinstance(eta_seconds, int | float) or isinstance(eta_seconds, bool):
        return ""
    if eta_seconds < 60:
        left = say("upload.eta_under_minute")
    else:
        hours, minutes = divmod(round(eta_seconds / 60), 60)
        left = say("upload.eta_hours", hours=hours, minutes=minutes) if hours \
            else say("upload.eta_minutes", minutes=minutes)
    return say("upload.eta", left=left)


def progress_line(name: str, card: Mapping[str, Any]) -> str:
    """Pure: a record's line while `--wait` follows it (stage, parts, share, time left)."""
    progress = card.get("progress")
    if isinstance(progress, dict):
        return say("upload.progress", name=name, stage=progress["stage"],
                   done=progress["done"], total=progress["total"],
                   percent=int(float(progress["fraction"]) * 100),
                   eta=time_left(progress.get("eta_seconds")))
    return say("upload.stage", name=name, stage=card["stage"])


async def _follow(session: aiohttp.ClientSession, client: Client, item: Item,
                  err: TextIO) -> None:
    """Poll the record's card until it is done, halted or gone; then read its transcript."""
    record = f"{client.server}/app/audiorecords/{item.record_id}"
    bar: tqdm[Never] = tqdm(total=100, desc=item.path.name, unit="%", file=err,
                            disable=not err.isatty(), leave=False)
    try:
        while True:
            status, body = await _get(session, record, err)
            if status == 404:
                item.outcome = "deleted"
                print(say("upload.deleted", name=item.path.name), file=err)
                return
            card = orjson.loads(body)
            if card["halt"] is not None:
                item.outcome = "halted"
                print(say("upload.halted", name=item.path.name, reason=card["halt"]["reason"],
                          message=card["halt"]["message"] or ""), file=err)
                return
            # Done and settled: the card stops asking to be polled once the record's
            # description is written too, so the transcript carries its title.
            if card["stage"] == "done" and card.get("poll_after_ms") is None:
                break
            line = progress_line(item.path.name, card)
            if err.isatty():
                progress = card.get("progress") or {}
                bar.n = int(float(progress.get("fraction", 0.0)) * 100)
                bar.set_postfix_str(str(progress.get("stage", card["stage"]))
                                    + time_left(progress.get("eta_seconds")))
            elif line != item.shown:
                print(line, file=err)
            item.shown = line
            await asyncio.sleep((card.get("poll_after_ms") or DEFAULT_POLL_MS) / 1000)
    finally:
        bar.close()
    status, body = await _get(session, f"{record}/transcript?format={client.fmt}", err)
    if status != 200:
        item.outcome = "refused"
        print(say("upload.refused", name=item.path.name, status=status,
                  message=body.decode("utf-8", errors="replace")[:200]), file=err)
        return
    item.outcome = "done"
    item.transcript = body.decode("utf-8")
    print(say("upload.done", name=item.path.name), file=err)


def _deliver(items: list[Item], client: Client, out: TextIO, err: TextIO) -> None:
    """Write each transcript to the output folder, or print them (headed when several)."""
    done = [item for item in items if item.transcript is not None]
    taken: set[Path] = set()
    for item in done:
        assert item.transcript is not None
        if client.output is not None:
            target = client.output / f"{item.path.stem}.{client.fmt}"
            if target in taken:
                target = client.output / f"{item.path.stem}-{item.record_id}.{client.fmt}"
            taken.add(target)
            target.write_text(item.transcript, encoding="utf-8")
            print(say("upload.written", name=item.path.name, path=target), file=err)
            continue
        if len(done) > 1:
            out.write(f"==> {item.path.name} <==\n")
        out.write(item.transcript if item.transcript.endswith("\n")
                  else item.transcript + "\n")


async def upload(client: Client, paths: list[Path], *, out: TextIO, err: TextIO) -> int:
    items = [Item(path=path) for path in paths]
    headers = {"Accept": "application/json"}
    if client.token:
        headers["Authorization"] = f"Bearer {client.token}"
    # No total limit: a large file takes as long as it takes; a silent server does not.
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=15, sock_read=300)
    try:
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:
            for item in items:
                await _send(session, client, item, err)
            if client.wait:
                await asyncio.gather(*(_follow(session, client, item, err)
                                       for item in items if item.outcome == "uploaded"))
    except Unreachable as exc:
        print(str(exc), file=err)
        return EXIT_UNREACHABLE
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        print(say("upload.unreachable", url=client.server,
                  reason=type(exc).__name__), file=err)
        return EXIT_UNREACHABLE
    _deliver(items, client, out, err)
    if not client.wait:
        for item in items:
            if item.record_id is not None:
                out.write(f"{item.record_id}\t{item.path}\n")
    good = "done" if client.wait else "uploaded"
    return 0 if all(item.outcome == good for item in items) else EXIT_REFUSED


def run(args: argparse.Namespace, settings: Settings) -> int:
    del settings  # a client: the server's settings are the server's
    client = client_of(args, os.environ)
    if isinstance(client, str):
        print(f"transcriber: {client}", file=sys.stderr)
        return EXIT_CONFIG
    return asyncio.run(upload(client, list(args.files), out=sys.stdout, err=sys.stderr))
