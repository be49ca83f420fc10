"""Transcript downloads as documents people open (`format=md|docx`), on both engines.

The DOCX is read back with python-docx, an independent reader."""

from __future__ import annotations

import io

import docx

from tests.helpers.web import Client, transcribe, upload
from transcriber.ports import Utterance

TALK = (
    Utterance(start_ms=0, end_ms=1500, channel=0, speaker="S1", text="Привет, это *тест*."),
    Utterance(start_ms=65_000, end_ms=67_000, channel=1, speaker="S2", text="Second speaker."),
)


async def _transcribed(client: Client) -> str:
    record = await upload(client, name="Планёрка.m4a")
    await transcribe(client, str(record["id"]), TALK)
    return str(record["id"])


async def test_transcript_docx_opens_with_speakers_and_times(client: Client) -> None:
    record_id = await _transcribed(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format=docx")
    assert response.status == 200
    assert response.headers["Content-Type"] == (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    assert "filename*=UTF-8''%D0%9F" in response.headers["Content-Disposition"]
    assert ".docx" in response.headers["Content-Disposition"]
    paragraphs = docx.Document(io.BytesIO(await response.read())).paragraphs
    texts = [p.text for p in paragraphs]
    assert texts[-2:] == ["S1 [0:00] Привет, это *тест*.", "S2 [1:05] Second speaker."]
    assert "S1, S2" in texts[1]
    assert paragraphs[-1].runs[0].bold


async def test_transcript_md_names_speakers_and_escapes(client: Client) -> None:
    record_id = await _transcribed(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format=md")
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert ".md" in response.headers["Content-Disposition"]
    text = await response.text()
    assert text.startswith("# ")
    assert r"**S1** \[0:00\] Привет, это \*тест\*\." in text
    assert r"**S2** \[1:05\] Second speaker\." in text
