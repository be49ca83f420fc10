"""`transcriber upload` in pieces (tus): a large file goes through /app/uploads/ and
continues after its connection is cut in the middle of a piece."""

from __future__ import annotations

import asyncio
import hashlib
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.helpers.audio import FIXTURES
from tests.helpers.processes import free_port
from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import LiveService, live_service, make_token
from tests.helpers.web import stored_files
from transcriber.cli import resumable
from transcriber.cli.upload import Client, upload
from transcriber.db import reads
from transcriber.db.commands.spaces import CreateSpace
from transcriber.web import keys

AUDIO = FIXTURES / "two_speakers.mp3"
PIECE = 8 * 1024


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Every file in pieces of 8 KiB (nine for this one), and no wait between tries.
    monkeypatch.setattr(resumable, "RESUMABLE_MIN_BYTES", 1)
    monkeypatch.setattr(resumable, "PIECE_BYTES", PIECE)
    monkeypatch.setattr(resumable, "retry_seconds", lambda *_: 0.0)
    # The memory of unfinished uploads (cli/remembered.py) in the test's own folder.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.fixture
async def service(make_settings: SettingsFactory) -> AsyncIterator[LiveService]:
    async with live_service(make_settings, server={"anonymous_user": ""},
                            describer={"provider": "off"}) as running:
        yield running


class CuttingProxy:
    """A TCP relay that cuts its first connection once `cut_after` bytes went up."""

    def __init__(self, upstream_port: int, cut_after: int) -> None:
        self.upstream_port = upstream_port
        self.cut_after = cut_after
        self.cuts = 0
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        cutting = self.connections == 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter,
                       counted: bool) -> None:
            sent = 0
            try:
                while chunk := await source.read(4096):
                    if counted and cutting and sent + len(chunk) > self.cut_after:
                        self.cuts += 1
                        sink.write(chunk[: self.cut_after - sent])
                        break
                    sent += len(chunk)
                    sink.write(chunk)
                    await sink.drain()
            except ConnectionError:
                pass
            finally:
                for side in (writer, up_writer):
                    side.transport.abort()

        await asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))


async def _run(base: str, token: str, path: Path,
               space: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    client = Client(server=base, token=token or None, language=None, wait=False, fmt="txt",
                    output=None, space=space)
    code = await upload(client, [path], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


async def test_a_large_file_goes_in_pieces_and_lands_whole(
        service: LiveService, data_dir: Path) -> None:
    token = await make_token(service.app, "alice")
    code, out, err = await _run(service.base, token, AUDIO)
    assert code == 0, err
    record_id = out.split("\t")[0]
    (stored,) = stored_files(data_dir)
    assert stored.parent.name == record_id
    assert hashlib.sha256(stored.read_bytes()).digest() == \
        hashlib.sha256(AUDIO.read_bytes()).digest()
    assert not list((data_dir / "uploads").iterdir())


async def test_space_goes_with_the_pieces(service: LiveService) -> None:
    """`--space ID` reaches the record through the resumable path too (its metadata)."""
    token = await make_token(service.app, "alice")
    readers = service.app[keys.READERS]
    alice = await reads.users.by_login(readers, login="alice")
    assert alice is not None
    space = await service.app[keys.WRITER].ask(CreateSpace(space_name="family",
                                                           admin_id=alice.id))
    code, out, err = await _run(service.base, token, AUDIO, space=space.id)
    assert code == 0, err
    grant = await reads.access.grant(readers, record_id=out.split("\t")[0], user_id=alice.id)
    assert grant is not None
    assert grant.space_id == space.id


async def test_a_connection_cut_mid_piece_continues_from_the_servers_offset(
        service: LiveService, data_dir: Path) -> None:
    token = await make_token(service.app, "alice")
    upstream = int(service.base.rsplit(":", 1)[1])
    proxy = CuttingProxy(upstream, cut_after=30_000)
    port = free_port()
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", port)
    try:
        code, out, err = await _run(f"http://127.0.0.1:{port}", token, AUDIO)
    finally:
        server.close()
    assert code == 0, err
    assert proxy.cuts == 1
    assert "continuing from the last byte the server kept" in err
    (stored,) = stored_files(data_dir)
    assert stored.read_bytes() == AUDIO.read_bytes()
    assert out.startswith(stored.parent.name)


async def test_a_server_without_resumable_uploads_gets_the_file_in_one_request(
        tmp_path: Path) -> None:
    # An older server: /app/uploads/ is 404, the one-shot upload takes the file.
    received: list[bytes] = []

    async def one_shot(request: web.Request) -> web.Response:
        received.append(await request.read())
        return web.json_response({"id": "01jz0000000000000000000000"}, status=201)

    app = web.Application(client_max_size=1024**2)
    app.router.add_post("/app/audiorecords", one_shot)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        code, out, err = await _run(f"http://127.0.0.1:{port}", "", AUDIO)
    finally:
        await runner.cleanup()
    assert code == 0, err
    assert received == [AUDIO.read_bytes()]
    assert out.startswith("01jz0000000000000000000000\t")


class Stopped(Exception):
    """The run is stopped (Ctrl-C, a killed process) in the middle of the upload."""


async def test_a_run_stopped_in_the_middle_is_continued_by_the_next_run(
        service: LiveService, data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    token = await make_token(service.app, "alice")
    offsets: list[int] = []
    stop_at: list[int] = [3]
    original = resumable._Tus.patch

    async def patch(self: resumable._Tus, location: object, path: Path, offset: int,
                    length: int, sent: object) -> resumable.TusAnswer:
        offsets.append(offset)
        if stop_at and len(offsets) > stop_at[0]:
            raise Stopped
        return await original(self, location, path, offset, length, sent)  # type: ignore[arg-type]

    monkeypatch.setattr(resumable._Tus, "patch", patch)
    with pytest.raises(Stopped):
        await _run(service.base, token, AUDIO)
    assert (tmp_path / "cache" / "transcriber" / "uploads.json").is_file()
    stop_at.clear()
    offsets.clear()
    code, _, err = await _run(service.base, token, AUDIO)
    assert code == 0, err
    assert "continuing the upload an earlier run left at" in err
    assert offsets[0] == 3 * PIECE  # nothing of the first three pieces again
    (stored,) = stored_files(data_dir)
    assert stored.read_bytes() == AUDIO.read_bytes()
    assert b"uploads" not in (tmp_path / "cache" / "transcriber" / "uploads.json").read_bytes()
