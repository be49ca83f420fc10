"""`transcriber space create|add|remove|list` (docs/sharing.md), in process."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.archive import kept_logging
from transcriber.cli import main
from transcriber.db.connection import database_path


@pytest.fixture(autouse=True)
def _archive(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TRANSCRIBER_STORAGE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    with kept_logging():  # `main` sets logging up; the tests after this one keep theirs
        yield


def _members(data_dir: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(database_path(data_dir)) as conn:
        return list(conn.execute(
            "SELECT s.name, u.provider_login, m.role FROM space_members AS m "
            "JOIN spaces AS s ON s.id = m.space_id JOIN users AS u ON u.id = m.user_id "
            "ORDER BY u.provider_login"))


def test_create_add_remove_and_list(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["space", "create", "family", "--admin", "olga"]) == 0
    assert "olga is its admin" in capsys.readouterr().err
    assert main(["space", "create", "family", "--admin", "adam"]) == 1  # the name is taken
    assert main(["space", "add", "family", "vera", "--role", "viewer"]) == 0
    assert main(["space", "add", "family", "eddy", "--role", "editor"]) == 0
    assert main(["space", "add", "nowhere", "eddy"]) == 1
    assert _members(data_dir) == [("family", "eddy", "editor"), ("family", "olga", "admin"),
                                  ("family", "vera", "viewer")]
    # The last admin stays: neither stepping down nor leaving.
    assert main(["space", "add", "family", "olga", "--role", "viewer"]) == 1
    assert main(["space", "remove", "family", "olga"]) == 1
    assert main(["space", "remove", "family", "vera"]) == 0
    assert main(["space", "remove", "family", "vera"]) == 1  # not a member any more
    capsys.readouterr()
    assert main(["space", "list"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split("\t") == ["id", "name", "created", "members"]
    assert line.split("\t")[1:2] == ["family"]
    assert line.split("\t")[3] == "eddy:editor, olga:admin"
    with pytest.raises(SystemExit):
        main(["space", "add", "family", "eddy", "--role", "owner"])  # no such role
