"""Tokens and the command-line client against a real `serve`, from an untrusted address.

The server (real steps and ffmpeg, the fake recognizer) trusts no proxy on
loopback (`server.trusted_proxies` is 10.255.0.0/16) and has no anonymous
user, so the test's requests from 127.0.0.1 are a stranger's: only a bearer
token gets them in. Tokens are made and revoked by `transcriber token` in
processes of their own, beside the running server.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import aiohttp
import openai
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.processes import free_port, start_server_with_fake_recognizer, wait_ready

pytestmark = pytest.mark.slow

AUDIO = FIXTURES / "librivox_0880.mp3"
SAID = "hello from the fake recognizer"
SERVER_ENV = {
    "TRANSCRIBER_PIPELINE_WORKERS": "1",
    "TRANSCRIBER_SERVER_TRUSTED_PROXIES": "10.255.0.0/16",
    "TRANSCRIBER_SERVER_ANONYMOUS_USER": "",
    "TRANSCRIBER_STORAGE_MIN_FREE_BYTES": "0",
    "TRANSCRIBER_RECOGNIZER_DIARIZATION": "off",
    # No describer: the transcripts read are the recognizer's words alone (its title
    # would head the TXT export; tests/integration/cli/test_upload_client.py has that).
    "TRANSCRIBER_DESCRIBER_PROVIDER": "off",
    # A card may be polled every 400 ms.
    "TRANSCRIBER_SERVER_RATE_LIMIT_WINDOW_SECONDS": "6",
}


def _cli(data_dir: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
                   "LANG": "C.UTF-8", **env}
    environment.pop("LC_ALL", None)
    return subprocess.run([sys.executable, "-m", "transcriber.cli", *argv], env=environment,
                          capture_output=True, text=True, timeout=120, check=False)


def _token(data_dir: Path, *argv: str) -> str:
    made = _cli(data_dir, "token", "create", "alice", *argv)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _until_done(session: aiohttp.ClientSession, card_url: str, token: str) -> None:
    for _ in range(300):
        async with session.get(card_url, headers=_auth(token)) as response:
            card = await response.json()
        assert card["halt"] is None, card["halt"]
        if card["stage"] == "done":
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the record did not get done")


async def test_tokens_and_the_client_from_an_untrusted_address(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server_with_fake_recognizer(data_dir, port, **SERVER_ENV)
    try:
        await asyncio.to_thread(wait_ready, port, server)
        writer, reader = _token(data_dir, "--name", "script"), _token(data_dir, "--scope", "read")
        async with aiohttp.ClientSession() as session:
            # A stranger: no anonymous user, and Remote-User is not believed from here.
            async with session.get(f"{base}/app/me") as me:
                assert me.status == 401
            async with session.get(f"{base}/app/me", headers={"Remote-User": "alice"}) as me:
                assert me.status == 401
            async with session.get(f"{base}/app/me", headers=_auth(writer)) as me:
                assert (me.status, (await me.json())["login"]) == (200, "alice")
            # The write token uploads and reads.
            async with session.post(f"{base}/app/audiorecords", data=AUDIO.read_bytes(),
                                    headers={**_auth(writer), "X-Filename": AUDIO.name}) as up:
                assert up.status == 201, await up.text()
                card_url = base + up.headers["Location"]
            await _until_done(session, card_url, writer)
            async with session.get(f"{card_url}/transcript", headers=_auth(writer)) as text:
                assert (text.status, (await text.text()).strip()) == (200, SAID)
            # The read token reads, and is refused a write.
            async with session.get(card_url, headers=_auth(reader)) as card:
                assert card.status == 200
            async with session.post(f"{base}/app/audiorecords", data=AUDIO.read_bytes(),
                                    headers={**_auth(reader), "X-Filename": "x.mp3"}) as up:
                assert up.status == 403
            # Revoked from the command line: refused at the very next request.
            listed = _cli(data_dir, "token", "list", "alice")
            [line] = [row for row in listed.stdout.splitlines() if "\tscript\t" in row]
            revoked = _cli(data_dir, "token", "revoke", line.split("\t")[0])
            assert revoked.returncode == 0, revoked.stderr
            async with session.get(card_url, headers=_auth(writer)) as card:
                assert card.status == 401
        # The command-line client, its server and token from the variables.
        client_token = _token(data_dir)
        uploaded = await asyncio.to_thread(
            _cli, data_dir, "upload", str(AUDIO), "--wait", "--format", "txt",
            TRANSCRIBER_SERVER_URL=base, TRANSCRIBER_TOKEN=client_token)
        assert uploaded.returncode == 0, uploaded.stderr
        assert uploaded.stdout.strip() == SAID
        refused = await asyncio.to_thread(
            _cli, data_dir, "upload", str(AUDIO), TRANSCRIBER_SERVER_URL=base,
            TRANSCRIBER_TOKEN=writer)
        assert refused.returncode == 3
        # OpenAI's speech-to-text API, its own client.
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=client_token) as speech:
            with AUDIO.open("rb") as audio:
                answer = await speech.audio.transcriptions.create(model="whisper-1",
                                                                  file=audio)
        assert answer.text == SAID
    finally:
        server.terminate()
        output = (await asyncio.to_thread(server.communicate, timeout=30))[0].decode()
    assert server.returncode == 0, output[-3000:]
    for token in (writer, reader, client_token):
        assert token not in output  # never logged
