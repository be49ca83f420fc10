"""The CLI client's `--format md|docx`: Markdown printed or written, DOCX only into a
file (read back with python-docx, an independent reader)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import docx
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import LiveService, live_service, make_token
from transcriber.cli.exits import EXIT_CONFIG
from transcriber.cli.parser import build_parser
from transcriber.cli.upload import Client, upload

AUDIO = FIXTURES / "librivox_0880.mp3"


@pytest.fixture
async def service(make_settings: SettingsFactory) -> AsyncIterator[LiveService]:
    async with live_service(make_settings, server={"anonymous_user": ""},
                            describer={"provider": "off"}) as running:
        yield running


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


async def _run(service: LiveService, fmt: str, output: Path | None) -> tuple[int, str, str]:
    token = await make_token(service.app, "alice")
    client = Client(server=service.base, token=token, language=None, wait=True, fmt=fmt,
                    output=output)
    out, err = io.StringIO(), io.StringIO()
    code = await upload(client, [AUDIO], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


async def test_md_is_printed(service: LiveService) -> None:
    code, out, err = await _run(service, "md", None)
    assert code == 0, err
    assert out.startswith("# ")
    assert r"\[0:00\] He was not an ill disposed" in out


async def test_docx_is_written_whole_and_opens(service: LiveService, tmp_path: Path) -> None:
    code, out, err = await _run(service, "docx", tmp_path)
    assert code == 0, err
    assert out == ""
    document = docx.Document(str(tmp_path / "librivox_0880.docx"))
    texts = [p.text for p in document.paragraphs]
    assert texts[-2:] == ["[0:00] He was not an ill disposed",
                          "[0:01] young man, said the archivist."]


async def test_docx_without_output_is_refused_before_uploading(service: LiveService) -> None:
    code, out, err = await _run(service, "docx", None)
    assert code == EXIT_CONFIG
    assert out == ""
    assert "--format docx makes a file, not text: add --output DIR" in err
    assert "uploaded" not in err


def test_transcribe_which_prints_offers_no_docx_and_upload_does() -> None:
    parser = build_parser()
    assert parser.parse_args(["upload", "a.mp3", "--format", "docx"]).format == "docx"
    assert parser.parse_args(["transcribe", "a.mp3", "--format", "md"]).format == "md"
    with pytest.raises(SystemExit):
        parser.parse_args(["transcribe", "a.mp3", "--format", "docx"])
