"""`transcriber upload`: the command-line client against a whole service on loopback."""

from __future__ import annotations

import argparse
import dataclasses
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.archive import kept_logging
from tests.helpers.audio import FIXTURES
from tests.helpers.processes import free_port
from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import LiveService, live_service, make_token
from transcriber.cli import main
from transcriber.cli.exits import EXIT_CONFIG, EXIT_REFUSED, EXIT_UNREACHABLE
from transcriber.cli.upload import Client, client_of, upload
from transcriber.core.errors import PermanentFailure
from transcriber.db import reads
from transcriber.db.commands.spaces import CreateSpace
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.web import keys

AUDIO = FIXTURES / "librivox_0880.mp3"
OTHER = FIXTURES / "espeak_en.ogg"
TEXT = "He was not an ill disposed\nyoung man, said the archivist.\n"


@pytest.fixture
async def service(make_settings: SettingsFactory) -> AsyncIterator[LiveService]:
    # No describer: the transcripts are the recognizer's words alone.
    async with live_service(make_settings, server={"anonymous_user": ""},
                            describer={"provider": "off"}) as running:
        yield running


async def test_wait_follows_the_record_until_its_description_is_written(
    make_settings: SettingsFactory,
) -> None:
    async with live_service(make_settings, server={"anonymous_user": ""},
                            describer={"provider": "extractive", "poll_seconds": 0.1}) as running:
        token = await make_token(running.app, "alice")
        code, out, err = await _run(_client(running, token), AUDIO)
        assert code == 0, err
        readers = running.app[keys.READERS]
        alice = await reads.users.by_login(readers, login="alice")
        assert alice is not None
        (record,) = await reads.lists.owner_page(readers, owner_id=alice.id, limit=2)
        # The describer was done before the client read the transcript; a one-sentence
        # message gets no title that would only repeat it (docs/describer.md).
        assert record.describe_state == "done"
        assert record.title == ""
        assert out == TEXT


def _client(service: LiveService | str, token: str | None, *, wait: bool = True,
            output: Path | None = None, fmt: str = "txt") -> Client:
    base = service if isinstance(service, str) else service.base
    return Client(server=base, token=token, language=None, wait=wait, fmt=fmt, output=output)


async def _run(client: Client, *paths: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await upload(client, list(paths), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


async def test_wait_writes_each_transcript_into_the_folder(service: LiveService,
                                                           tmp_path: Path) -> None:
    token = await make_token(service.app, "alice")
    code, out, err = await _run(_client(service, token, output=tmp_path), AUDIO, OTHER)
    assert code == 0, err
    assert out == ""
    assert (tmp_path / "librivox_0880.txt").read_text() == TEXT
    assert (tmp_path / "espeak_en.txt").read_text() == TEXT
    assert "librivox_0880.mp3: uploaded as record" in err
    assert "librivox_0880.mp3: done" in err


async def test_wait_prints_the_transcripts_headed_when_several(service: LiveService) -> None:
    token = await make_token(service.app)
    code, out, _ = await _run(_client(service, token, fmt="srt"), AUDIO)
    assert code == 0
    assert out.startswith("1\n00:00:00,000 --> 00:00:01,200\nHe was not an ill disposed\n")
    code, out, _ = await _run(_client(service, token), AUDIO, OTHER)
    assert code == 0
    assert out == f"==> {AUDIO.name} <==\n{TEXT}==> {OTHER.name} <==\n{TEXT}"


async def test_without_wait_it_prints_the_record_ids(service: LiveService) -> None:
    token = await make_token(service.app)
    code, out, _ = await _run(_client(service, token, wait=False), AUDIO)
    assert code == 0
    record_id, path = out.strip().split("\t")
    assert (len(record_id), path) == (26, str(AUDIO))


async def test_a_refused_token_is_exit_3_and_uploads_nothing(service: LiveService) -> None:
    code, _, err = await _run(_client(service, "tx_" + "C" * 43), AUDIO)
    assert code == EXIT_UNREACHABLE
    assert "refused the credentials (HTTP 401)" in err
    reader = await make_token(service.app, scope="read")
    code, _, err = await _run(_client(service, reader), AUDIO)
    assert code == EXIT_UNREACHABLE
    assert "(HTTP 403)" in err
    code, _, _ = await _run(_client(service, None), AUDIO)  # no token, no anonymous user
    assert code == EXIT_UNREACHABLE


async def test_an_unreachable_server_is_exit_3() -> None:
    code, _, err = await _run(_client(f"http://127.0.0.1:{free_port()}", None), AUDIO)
    assert code == EXIT_UNREACHABLE
    assert "cannot reach" in err


async def test_a_refused_file_or_a_halted_record_is_exit_1(
    make_settings: SettingsFactory, tmp_path: Path,
) -> None:
    words = tmp_path / "notes.mp3"
    words.write_text("just some words, no audio")
    failing = FakeRecognizer()
    failing.submit_faults.append(PermanentFailure("refused"))
    async with live_service(make_settings, recognizer=failing) as service:
        token = await make_token(service.app)
        code, out, err = await _run(_client(service, token), words, AUDIO)
    assert code == EXIT_REFUSED
    assert "notes.mp3: refused (HTTP 415)" in err
    assert "librivox_0880.mp3: halted (step_failed)" in err
    assert out == ""


def _args(*argv: str) -> argparse.Namespace:
    from transcriber.cli.parser import build_parser  # noqa: PLC0415

    return build_parser().parse_args(["upload", *argv])


def test_the_client_settings_come_from_flags_or_variables(tmp_path: Path) -> None:
    audio = str(AUDIO)
    assert client_of(_args(audio), {}) == (
        "say which server: --server URL or TRANSCRIBER_SERVER_URL")
    from_env = client_of(_args(audio), {"TRANSCRIBER_SERVER_URL": "https://t.example/",
                                        "TRANSCRIBER_TOKEN": "tx_env"})
    assert isinstance(from_env, Client)
    assert (from_env.server, from_env.token) == ("https://t.example", "tx_env")
    flags = client_of(_args(audio, "--server", "http://h:1", "--token", "tx_flag"),
                      {"TRANSCRIBER_SERVER_URL": "https://t.example",
                       "TRANSCRIBER_TOKEN": "tx_env"})
    assert isinstance(flags, Client)
    assert (flags.server, flags.token) == ("http://h:1", "tx_flag")
    assert "http:// or https://" in str(client_of(_args(audio, "--server", "ftp://h"), {}))
    assert "no such file" in str(client_of(_args("nope.mp3", "--server", "http://h"), {}))
    assert "not a folder" in str(client_of(
        _args(audio, "--server", "http://h", "--output", str(AUDIO)), {}))


def test_bad_usage_is_exit_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TRANSCRIBER_SERVER_URL", raising=False)
    monkeypatch.setenv("TRANSCRIBER_STORAGE_DATA_DIR", str(tmp_path))
    # `main` points logging at the captured streams: the set-up is put back after.
    with kept_logging():
        assert main(["upload", str(AUDIO)]) == EXIT_CONFIG
    assert "--server URL" in capsys.readouterr().err
    with kept_logging(), pytest.raises(SystemExit) as usage:
        main(["upload", str(AUDIO), "--format", "doc"])
    assert usage.value.code == EXIT_CONFIG


async def test_messages_follow_a_russian_locale(service: LiveService,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "ru_RU.UTF-8")
    token = await make_token(service.app)
    code, _, err = await _run(_client(service, token), AUDIO)
    assert code == 0
    assert "загружено, запись" in err
    assert "готово" in err


async def test_space_files_the_records_into_that_space(service: LiveService) -> None:
    """`--space ID`: the upload's `space` (docs/sharing.md)."""
    token = await make_token(service.app, "alice")
    readers = service.app[keys.READERS]
    alice = await reads.users.by_login(readers, login="alice")
    assert alice is not None
    space = await service.app[keys.WRITER].ask(CreateSpace(space_name="family",
                                                           admin_id=alice.id))
    client = dataclasses.replace(_client(service, token, wait=False), space=space.id)
    code, out, err = await _run(client, AUDIO)
    assert code == 0, err
    record_id = out.split("\t")[0]
    grant = await reads.access.grant(readers, record_id=record_id, user_id=alice.id)
    assert grant is not None
    assert grant.space_id == space.id
    args = client_of(_args(str(AUDIO), "--server", "http://h", "--space", space.id), {})
    assert isinstance(args, Client)
    assert args.space == space.id
