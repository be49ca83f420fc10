"""`transcriber upload` against a hostile server on loopback: it trusts nothing it is told.

Each attack is a real HTTP server's answer (tests/helpers/hostile_server.py);
the cases a traceback or an exit code would show run the real command as a
child process. docs/hostile-input.md, "The command-line client", has the rows.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.helpers.hostile_server import (
    RECORD_IDS,
    TRANSCRIPT,
    HostileServer,
    card,
    error,
    hostile_server,
    outside_address,
    run_cli,
    trickle,
)
from transcriber.cli.answers import Bounds
from transcriber.cli.exits import (
    EXIT_BAD_ANSWER,
    EXIT_CONFIG,
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
)
from transcriber.cli.upload import Client, upload

# What a terminal would take as a command: ESC, BEL, CSI (C1), a bidi override.
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"  # writes the clipboard
TITLE = "\x1b]0;owned\x07\x1b[2J"  # sets the window title, clears the screen
MIB = 1024 * 1024
AUDIO_BYTES = 3000


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.fixture
async def server() -> AsyncIterator[HostileServer]:
    async with hostile_server() as running:
        yield running


@pytest.fixture
def audio(tmp_path: Path) -> Path:
    path = tmp_path / "talk.mp3"
    path.write_bytes(b"\xff\xfb" + bytes(AUDIO_BYTES - 2))
    return path


def _client(server: HostileServer, *, output: Path | None = None, wait: bool = True,
            token: str | None = "tx_secret", timeout: float = 30.0,
            cap: int = 64 * MIB, force: bool = False) -> Client:
    return Client(server=server.base, token=token, language=None, wait=wait, fmt="txt",
                  output=output, force=force,
                  bounds=Bounds(timeout_seconds=timeout, transcript_max_bytes=cap))


async def _run(client: Client, *paths: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.wait_for(upload(client, list(paths), out=out, err=err), 60)
    return code, out.getvalue(), err.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _names(folder: Path, pattern: str = "*") -> list[str]:
    return sorted(path.name for path in folder.rglob(pattern))


def _inert(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the terminal"


# -- 9. escape sequences ------------------------------------------------------------


async def test_escapes_in_a_halt_reason_and_message_are_shown_inert(
        server: HostileServer, audio: Path) -> None:
    async def halted(request: web.Request) -> web.StreamResponse:
        del request
        return web.json_response(card(stage="transcribing",
                                      halt={"reason": TITLE, "message": OSC52}))

    server.card = halted
    code, out, err = await _run(_client(server), audio)
    assert code == EXIT_REFUSED
    _inert(err + out)
    assert "halted (\\x1b]0;owned\\x07\\x1b[2J): \\x1b]52;c;" in err


async def test_escapes_in_errors_progress_and_the_transcript_are_shown_inert(
        server: HostileServer, audio: Path, tmp_path: Path) -> None:
    polls = 0

    async def moving(request: web.Request) -> web.StreamResponse:
        nonlocal polls
        del request
        polls += 1
        if polls == 1:
            return web.json_response(card(stage="transcribing\x1b[2J", poll_after_ms=1,
                                          progress={"stage": f"x{OSC52}", "done": 1,
                                                    "total": 2, "fraction": 0.5}))
        return web.json_response(card())

    async def transcript(request: web.Request) -> web.StreamResponse:
        del request
        return web.Response(body=f"line one{TITLE}\n\tline two\u202e\r\n".encode()
                            + b"\xff\xfe not UTF-8\n")

    server.card, server.transcript = moving, transcript
    code, out, err = await _run(_client(server), audio)
    assert code == 0, err
    _inert(out + err)
    assert "talk.mp3: x\\x1b]52;c;" in err
    assert out == ("line one\\x1b]0;owned\\x07\\x1b[2J\n\tline two\\u202e\\x0d\n"
                   "\ufffd\ufffd not UTF-8\n")
    # On a terminal the progress is a bar: its text passes the same way.
    polls = 0
    terminal = _Terminal()
    code = await upload(_client(server), [audio], out=io.StringIO(), err=terminal)
    assert code == 0
    assert "x\\x1b]52;c;" in terminal.getvalue()
    assert "\x1b]" not in terminal.getvalue()
    assert "\x07" not in terminal.getvalue()

    async def refused(request: web.Request) -> web.StreamResponse:
        del request
        return error(415, f"not audio{OSC52}")

    server.upload = refused
    run = await run_cli("upload", str(audio), "--server", server.base,
                        data_dir=tmp_path)
    assert run.code == EXIT_REFUSED, run.err
    _inert(run.err + run.out)
    assert "talk.mp3: refused (HTTP 415): not audio\\x1b]52;c;" in run.err

    async def unauthorized(request: web.Request) -> web.StreamResponse:
        del request
        return error(401, TITLE)

    server.upload = unauthorized
    run = await run_cli("upload", str(audio), "--server", server.base, data_dir=tmp_path)
    assert run.code == EXIT_UNREACHABLE
    _inert(run.err)
    assert "(HTTP 401): \\x1b]0;owned" in run.err


# -- 10. output names ---------------------------------------------------------------


async def test_a_traversal_record_id_is_refused_and_names_come_from_the_files(
        server: HostileServer, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out = tmp_path / "deep" / "out"
    out.mkdir(parents=True)
    first, second = tmp_path / "a" / "talk.mp3", tmp_path / "b" / "talk.wav"
    first.write_bytes(b"1" * 100)
    second.write_bytes(b"2" * 100)
    server.record_ids = ["x/../../escaped", "../../../../escaped"]
    run = await run_cli("upload", str(first), str(second), "--server", server.base,
                        "--wait", "--output", str(out), data_dir=tmp_path)
    assert run.code == EXIT_BAD_ANSWER, run.err
    assert run.err.count("the upload's answer holds no record id") == 2
    assert "Traceback" not in run.err
    assert _names(tmp_path, "*escaped*") == []
    assert _names(out) == []
    assert server.count("GET") == 0  # a bad id is never put into a URL

    server.seen.clear()
    server.record_ids = list(RECORD_IDS)
    run = await run_cli("upload", str(first), str(second), "--server", server.base,
                        "--wait", "--output", str(out), data_dir=tmp_path)
    assert run.code == 0, run.err
    assert _names(out) == ["talk-2.txt", "talk.txt"]
    assert (out / "talk.txt").read_text() == TRANSCRIPT

    # Again: refused before anything is sent, the files kept; --force overwrites.
    (out / "talk.txt").write_text("mine")
    server.seen.clear()
    run = await run_cli("upload", str(first), str(second), "--server", server.base,
                        "--wait", "--output", str(out), data_dir=tmp_path)
    assert run.code == EXIT_CONFIG
    assert "talk.txt exists" in run.err
    assert server.seen == []
    assert (out / "talk.txt").read_text() == "mine"
    server.record_ids = list(RECORD_IDS)
    run = await run_cli("upload", str(first), str(second), "--server", server.base,
                        "--wait", "--output", str(out), "--force", data_dir=tmp_path)
    assert run.code == 0, run.err
    assert (out / "talk.txt").read_text() == TRANSCRIPT


async def test_force_replaces_a_planted_symlink_instead_of_writing_through_it(
        server: HostileServer, audio: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (out / "talk.txt").symlink_to(victim)
    code, _, err = await _run(_client(server, output=out), audio)
    assert code == EXIT_CONFIG
    assert "exists" in err
    code, _, err = await _run(_client(server, output=out, force=True), audio)
    assert code == 0, err
    assert victim.read_text() == "precious"
    assert not (out / "talk.txt").is_symlink()
    assert (out / "talk.txt").read_text() == TRANSCRIPT


async def test_an_output_folder_gone_meanwhile_is_one_line_and_exit_1(
        server: HostileServer, audio: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()

    async def gone(request: web.Request) -> web.StreamResponse:
        del request
        out.rmdir()
        return web.json_response(card())

    server.card = gone
    run = await run_cli("upload", str(audio), "--server", server.base, "--wait",
                        "--output", str(out), data_dir=tmp_path)
    assert run.code == EXIT_REFUSED
    assert "Traceback" not in run.err
    assert "talk.mp3: cannot write" in run.err
    assert not out.exists()


# -- 11. bounds ---------------------------------------------------------------------


@pytest.mark.parametrize("declared", [False, True], ids=["chunked", "declared"])
async def test_a_512_mib_transcript_stops_at_the_cap_in_bounded_memory(
        server: HostileServer, audio: Path, tmp_path: Path, declared: bool) -> None:
    argv = ("upload", str(audio), "--server", server.base, "--wait",
            "--max-transcript-mib", "16")
    baseline = await run_cli(*argv, data_dir=tmp_path)
    assert baseline.code == 0, baseline.err

    async def huge(request: web.Request) -> web.StreamResponse:
        return await server.stream_transcript(request, total=512 * MIB, declared=declared)

    server.transcript = huge
    run = await run_cli(*argv, data_dir=tmp_path)
    assert run.code == EXIT_BAD_ANSWER, run.err
    assert "the answer is larger than 16 MiB: not read" in run.err
    assert "Traceback" not in run.err
    growth_mib = (run.max_rss_kib - baseline.max_rss_kib) / 1024
    print(f"peak RSS {baseline.max_rss_kib // 1024} MiB -> {run.max_rss_kib // 1024} MiB, "
          f"server sent {server.sent_bytes // MIB} MiB")
    # Reading it whole would be 512 MiB of bytes and as much again decoded.
    assert growth_mib < 120, growth_mib
    assert server.sent_bytes < 160 * MIB  # the client hung up; the server could not go on
    if declared:
        assert server.sent_bytes <= 8 * MIB  # refused by its Content-Length


async def test_a_trickling_server_is_given_up_by_the_deadline(
        server: HostileServer, audio: Path, tmp_path: Path) -> None:
    server.card = trickle
    loop = asyncio.get_running_loop()
    started = loop.time()
    code, _, err = await _run(_client(server, timeout=1.0), audio)
    assert code == EXIT_UNREACHABLE
    assert "no whole answer within 1 s (--timeout)" in err
    assert loop.time() - started < 45  # a generous bound: unbounded, it takes 120 s
    assert server.count("GET") == 1  # a slow answer is not asked again

    async def slow_head(request: web.Request) -> web.StreamResponse:
        return await trickle(request, head_first=False)

    server.seen.clear()
    server.card, server.upload = None, slow_head
    run = await run_cli("upload", str(audio), "--server", server.base, "--timeout", "1",
                        data_dir=tmp_path)
    assert run.code == EXIT_UNREACHABLE, run.err
    assert "Traceback" not in run.err


async def test_a_server_that_stops_reading_the_upload_is_given_up(
        server: HostileServer, tmp_path: Path) -> None:
    big = tmp_path / "long.wav"
    with big.open("wb") as handle:
        handle.truncate(64 * MIB)  # more than the socket buffers hold on loopback
    server.read_uploads = False

    async def stalled(request: web.Request) -> web.StreamResponse:
        return await trickle(request, head_first=False)

    server.upload = stalled
    code, _, err = await _run(_client(server, timeout=1.0), big)
    assert code == EXIT_UNREACHABLE
    assert "no whole answer within 1 s (--timeout)" in err


@pytest.mark.parametrize(("poll_after_ms", "most"), [(-1000, 9), (0, 9), (10**15, 2)])
async def test_the_poll_interval_is_clamped(server: HostileServer, audio: Path,
                                            poll_after_ms: int, most: int) -> None:
    async def forever(request: web.Request) -> web.StreamResponse:
        del request
        return web.json_response(card(stage="transcribing", poll_after_ms=poll_after_ms))

    server.card = forever
    with pytest.raises(TimeoutError):
        # 3 s of following: at most one card read per 0.5 s (unclamped: thousands).
        await asyncio.wait_for(upload(_client(server), [audio], out=io.StringIO(),
                                      err=io.StringIO()), 3.0)
    reads = server.count("GET")
    print(f"poll_after_ms {poll_after_ms}: {reads} card reads in 3 s")
    assert 1 <= reads <= most, reads


async def test_a_redirect_to_another_origin_is_refused_without_the_token(
        server: HostileServer, audio: Path, tmp_path: Path) -> None:
    async with hostile_server() as elsewhere:
        async def away(request: web.Request) -> web.StreamResponse:
            raise web.HTTPTemporaryRedirect(f"{elsewhere.base}{request.path}")

        server.upload = away
        run = await run_cli("upload", str(audio), "--server", server.base, "--wait",
                            data_dir=tmp_path)
        assert run.code == EXIT_BAD_ANSWER, run.err
        assert "a redirect to another origin (http://127.0.0.1:" in run.err
        assert "Traceback" not in run.err
        server.upload, server.card = None, away
        code, _, err = await _run(_client(server), audio)
        assert code == EXIT_BAD_ANSWER
        assert "not followed, nothing sent there" in err
        assert elsewhere.seen == []  # neither the file nor the token went there


async def test_a_same_origin_307_is_followed_and_a_303_on_upload_is_refused(
        server: HostileServer, audio: Path) -> None:
    async def moved(request: web.Request) -> web.StreamResponse:
        if request.path == "/app/audiorecords":
            raise web.HTTPTemporaryRedirect("/v2/app/audiorecords")
        return web.json_response({"id": RECORD_IDS[0]}, status=201)

    server.upload = moved
    code, out, err = await _run(_client(server), audio)
    assert code == 0, err
    assert out == TRANSCRIPT
    posts = [seen for seen in server.seen if seen.method == "POST"]
    assert [seen.path for seen in posts] == ["/app/audiorecords", "/v2/app/audiorecords"]
    assert {seen.body_bytes for seen in posts} == {AUDIO_BYTES}
    assert {seen.authorization for seen in posts} == {"Bearer tx_secret"}

    async def see_other(request: web.Request) -> web.StreamResponse:
        del request
        raise web.HTTPSeeOther("/app/audiorecords/elsewhere")

    server.upload = see_other
    code, _, err = await _run(_client(server), audio)
    assert code == EXIT_BAD_ANSWER
    assert "redirect (HTTP 303) that would drop the file" in err


async def test_a_token_over_plain_http_to_another_machine(audio: Path,
                                                          tmp_path: Path) -> None:
    address = outside_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    async with hostile_server(address) as server:
        run = await run_cli("upload", str(audio), "--server", server.base,
                            data_dir=tmp_path)
        assert run.code == EXIT_CONFIG
        assert f"the token would cross the network unencrypted to {address}" in run.err
        assert server.seen == []
        run = await run_cli("upload", str(audio), "--server", server.base, "--insecure",
                            data_dir=tmp_path)
        assert run.code == 0, run.err
        assert f"warning: the token crosses the network unencrypted to {address}" in run.err
        assert [seen.authorization for seen in server.seen] == ["Bearer tx_secret"]
        server.seen.clear()
        run = await run_cli("upload", str(audio), "--server", server.base, token=None,
                            data_dir=tmp_path)
        assert run.code == 0, run.err  # no token, nothing to protect
        assert "unencrypted" not in run.err


async def test_malformed_cards_and_compressed_answers_are_refused_per_file(
        server: HostileServer, audio: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.mp3"
    other.write_bytes(b"x" * 10)
    async def bad_first(request: web.Request) -> web.StreamResponse:
        if request.path.endswith(RECORD_IDS[0]):
            return web.Response(body=b'{"stage": 7, "halt": null}',
                                content_type="application/json")
        return web.json_response(card())

    server.card = bad_first
    code, out, err = await _run(_client(server), audio, other)
    assert code == EXIT_BAD_ANSWER
    assert "talk.mp3: the server's answer is refused: the record's card is not what the " \
           "API describes (field stage)" in err
    assert out == TRANSCRIPT  # the other file went on

    async def gzipped(request: web.Request) -> web.StreamResponse:
        del request
        return web.Response(body=b"\x1f\x8b" + bytes(100),
                            headers={"Content-Encoding": "gzip"})

    server.card, server.transcript = None, gzipped
    server.record_ids = list(RECORD_IDS)
    server.seen.clear()
    code, _, err = await _run(_client(server), audio)
    assert code == EXIT_BAD_ANSWER
    assert "compressed (gzip) though none was asked for" in err
