"""`transcriber token create|list|revoke`: the token alone on stdout, never again; revoked at
once, also for a server that runs."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import bearer, live_service
from transcriber.cli import token as token_cli
from transcriber.db.connection import database_path


def _cli(data_dir: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
                   "LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", **env}
    return subprocess.run([sys.executable, "-m", "transcriber.cli", "token", *argv],
                          env=environment, capture_output=True, text=True, timeout=60,
                          check=False)


def _hashes(data_dir: Path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(database_path(data_dir)) as conn:
        return list(conn.execute("SELECT token_hash, scope, expires_at FROM api_tokens"))


def test_create_prints_the_token_alone_and_stores_its_hash(data_dir: Path) -> None:
    made = _cli(data_dir, "create", "alice", "--name", "n8n", "--scope", "read",
                "--expires-days", "30")
    assert made.returncode == 0, made.stderr
    token = made.stdout.removesuffix("\n")
    assert "\n" not in token
    assert token.startswith("tx_")
    assert len(token) == 46
    assert "shown once" in made.stderr
    assert token not in made.stderr
    [(stored, scope, expires)] = _hashes(data_dir)
    assert (stored, scope) == (hashlib.sha256(token.encode()).hexdigest(), "read")
    assert expires is not None
    listed = _cli(data_dir, "list", "alice")
    assert listed.returncode == 0
    assert token not in listed.stdout
    assert stored not in listed.stdout
    line = listed.stdout.splitlines()[1].split("\t")
    assert line[1:4] == ["alice", "n8n", "read"]
    assert line[5] == "never"  # not used yet


def test_list_and_revoke_refuse_what_is_not_there(data_dir: Path) -> None:
    assert _cli(data_dir, "list", "nobody").returncode == 1
    missing = _cli(data_dir, "revoke", "01jabcdefghjkmnpqrstvwxyz0")
    assert (missing.returncode, missing.stderr.strip()) == (
        1, "token 01jabcdefghjkmnpqrstvwxyz0 not found")
    assert _cli(data_dir, "revoke", "../etc").returncode == 1
    bad = _cli(data_dir, "create", "ali ce")
    assert bad.returncode == 2  # argparse: the login is refused
    assert _cli(data_dir, "create", "alice", "--expires-days", "0").returncode == 2


def test_messages_follow_a_russian_locale(data_dir: Path) -> None:
    made = _cli(data_dir, "create", "alice", LANG="ru_RU.UTF-8")
    assert made.returncode == 0
    assert "показан один раз" in made.stderr
    assert made.stdout.startswith("tx_")


async def test_revoked_from_the_command_line_a_running_server_refuses_it_at_once(
    make_settings: SettingsFactory, data_dir: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    async with live_service(make_settings, server={"anonymous_user": ""}) as service:
        settings = make_settings()  # the same data folder as the server's
        assert await token_cli.create(settings, login="bob", name="", scope="write",
                                      days=None) == 0
        # The service's own log lines share stdout here; the token is the line of its own.
        [token] = [line for line in capsys.readouterr().out.splitlines()
                   if line.startswith("tx_")]
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{service.base}/app/me", headers=bearer(token)) as me:
                assert (me.status, (await me.json())["login"]) == (200, "bob")
            await token_cli.show(settings, login="bob")
            [row] = [line for line in capsys.readouterr().out.splitlines()
                     if line.endswith("\tnever")]
            token_id = row.split("\t")[0]
            assert await token_cli.revoke(settings, raw_id=token_id) == 0
            async with session.get(f"{service.base}/app/me", headers=bearer(token)) as me:
                assert me.status == 401
