"""File downloads with Range, transcript downloads in the text formats (md and docx:
test_document_downloads.py), resume; the file downloads on both record-file stores
(`storage.files` local and s3, on moto)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
import structlog

from tests.helpers.s3 import Bucket
from tests.helpers.subtitles import check_subtitle_rules, parse_srt, parse_vtt
from tests.helpers.web import SPEECH, Client, advance, halt, stored_files, transcribe, upload
from transcriber.pipeline.effects import AddFile, SetColumns
from transcriber.ports import Utterance
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

AUDIO = bytes(range(256)) * 4


@pytest.fixture(params=["local", "s3"])
def files_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Stored:
    """The record files the service stored, wherever `storage.files` puts them."""

    kind: str
    data_dir: Path
    request: pytest.FixtureRequest

    def names(self) -> list[str]:
        if self.kind == "local":
            return [path.name for path in stored_files(self.data_dir)]
        bucket: Bucket = self.request.getfixturevalue("s3_bucket")
        return [key.rsplit("/", 1)[-1] for key in bucket.record_keys()]

    def remove_all(self) -> None:
        if self.kind == "local":
            for path in stored_files(self.data_dir):
                path.unlink()
            return
        bucket: Bucket = self.request.getfixturevalue("s3_bucket")
        for key in bucket.record_keys():
            bucket.delete(key)


@pytest.fixture
def stored(files_kind: str, data_dir: Path, request: pytest.FixtureRequest) -> Stored:
    return Stored(kind=files_kind, data_dir=data_dir, request=request)


async def test_original_download_whole_file(client: Client, stored: Stored,
                                            transcoder: FakeTranscoder) -> None:
    transcoder.extension = ".mp3"  # what the probe found in the content
    record = await upload(client, AUDIO, name="%D0%B7%D0%B2%D0%BE%D0%BD%D0%BE%D0%BA 1.mp3")
    response = await client.get(f"/app/audiorecords/{record['id']}/file")
    assert response.status == 200
    assert await response.read() == AUDIO
    assert response.headers["Content-Type"] == "audio/mpeg"
    assert response.headers["Accept-Ranges"] == "bytes"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="')
    assert "filename*=UTF-8''%D0%B7%D0%B2%D0%BE%D0%BD%D0%BE%D0%BA%201.mp3" in disposition
    (name,) = stored.names()
    assert name.endswith(".mp3")
    assert name.removesuffix(".mp3") not in str(dict(response.headers))


@pytest.mark.parametrize(("range_header", "expected"), [
    ("bytes=0-3", AUDIO[0:4]),
    ("bytes=1000-", AUDIO[1000:]),
    ("bytes=-10", AUDIO[-10:]),
    ("bytes=1020-5000", AUDIO[1020:]),
])
async def test_range_requests(client: Client, range_header: str, expected: bytes) -> None:
    record = await upload(client, AUDIO)
    response = await client.get(f"/app/audiorecords/{record['id']}/file",
                                headers={"Range": range_header})
    assert response.status == 206
    assert await response.read() == expected
    assert response.headers["Content-Range"].endswith(f"/{len(AUDIO)}")
    assert response.headers["Content-Length"] == str(len(expected))
    assert response.headers["Accept-Ranges"] == "bytes"


async def test_if_range_of_another_version_sends_the_whole_file(client: Client) -> None:
    record = await upload(client, AUDIO)
    url = f"/app/audiorecords/{record['id']}/file"
    whole = await client.get(url)
    modified = whole.headers["Last-Modified"]
    same = await client.get(url, headers={"Range": "bytes=0-3", "If-Range": modified})
    assert same.status == 206
    assert await same.read() == AUDIO[:4]
    older = "Mon, 01 Jan 2001 00:00:00 GMT"
    other = await client.get(url, headers={"Range": "bytes=0-3", "If-Range": older})
    assert other.status == 200
    assert await other.read() == AUDIO


async def test_head_sends_the_headers_without_the_body(client: Client) -> None:
    record = await upload(client, AUDIO)
    response = await client.head(f"/app/audiorecords/{record['id']}/file")
    assert response.status == 200
    assert response.headers["Content-Length"] == str(len(AUDIO))
    assert await response.read() == b""


@pytest.mark.parametrize("range_header", ["bytes=5000-", "bytes=1024-1030", "bytes=9-2",
                                          "lines=1-2"])
async def test_unsatisfiable_range_is_json_416(client: Client, range_header: str) -> None:
    record = await upload(client, AUDIO)
    response = await client.get(f"/app/audiorecords/{record['id']}/file",
                                headers={"Range": range_header})
    assert response.status == 416
    assert response.headers["Content-Range"] == f"bytes */{len(AUDIO)}"
    assert (await response.json())["error"]["code"] == "range_not_satisfiable"


async def test_normalized_copy(client: Client) -> None:
    record = await upload(client, AUDIO, name="talk.wav")
    record_id = str(record["id"])
    missing = await client.get(f"/app/audiorecords/{record_id}/file?copy=normalized")
    assert missing.status == 404
    assert "normalized" in (await missing.json())["error"]["message"]

    files = client.app[keys.FILES]
    file_id, temp = files.temp_path(record_id, ".ogg")
    temp.write_bytes(b"OggS normalized")
    placed = await files.finalize(record_id, file_id, temp)
    await advance(client, record_id, AddFile.of(placed),
                  SetColumns(values={"normalized_file_id": file_id}))
    response = await client.get(f"/app/audiorecords/{record_id}/file?copy=normalized")
    assert response.status == 200
    assert await response.read() == b"OggS normalized"
    assert response.headers["Content-Type"] == "audio/ogg"
    assert 'filename="talk.ogg"' in response.headers["Content-Disposition"]


async def test_bad_copy_is_400(client: Client) -> None:
    record = await upload(client)
    response = await client.get(f"/app/audiorecords/{record['id']}/file?copy=../x")
    assert response.status == 400


async def test_file_gone_from_disk_is_404_without_the_path(
    client: Client, stored: Stored
) -> None:
    record = await upload(client)
    (name,) = stored.names()
    stored.remove_all()
    with structlog.testing.capture_logs() as logs:
        response = await client.get(f"/app/audiorecords/{record['id']}/file")
    assert response.status == 404
    assert name not in await response.text()
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["record_file_missing"]
    assert name not in str(logs)


# --- transcripts ---------------------------------------------------------------

def _expected_cues(fmt: str) -> list[tuple[int, int, str]]:
    """Each utterance one line of its cue; SRT bends arrows, WebVTT escapes `&<>`."""
    def cue_text(text: str) -> str:
        line = " ".join(text.split())
        if fmt == "srt":
            return re.sub(r"-{2,}>", "->", line)
        return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    return [(u.start_ms, u.end_ms, cue_text(u.text)) for u in SPEECH]


async def _transcribed(client: Client) -> str:
    record = await upload(client, name="Board meeting.m4a")
    await transcribe(client, str(record["id"]))
    return str(record["id"])


async def test_transcript_srt_parses_back(client: Client) -> None:
    record_id = await _transcribed(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format=srt")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/x-subrip")
    assert 'filename="Board meeting.srt"' in response.headers["Content-Disposition"]
    assert parse_srt(await response.text()) == _expected_cues("srt")


async def test_transcript_vtt_parses_back(client: Client) -> None:
    record_id = await _transcribed(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format=vtt")
    assert response.headers["Content-Type"].startswith("text/vtt")
    assert parse_vtt(await response.text()) == _expected_cues("vtt")


# What the user found (issue 38): one recognizer segment of 28 s was one SRT cue.
LONG = (
    Utterance(start_ms=0, end_ms=28_000, channel=0, speaker="S1", text=(
        "So this is a long utterance that goes on and on. It has many words, and some "
        "commas, and it keeps going for twenty-eight seconds because the recognizer made "
        "one segment of it all. Nobody wants to read that wall of text, do they?")),
    Utterance(start_ms=28_200, end_ms=28_500, channel=1, speaker="S2", text="No."),
)


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
async def test_a_long_utterance_downloads_as_subtitle_grade_cues(client: Client,
                                                                 fmt: str) -> None:
    record = await upload(client, name="Long talk.m4a")
    record_id = str(record["id"])
    await transcribe(client, record_id, LONG)
    patched = await client.patch(f"/app/audiorecords/{record_id}", json={"title": "Long talk"})
    assert patched.status == 200, await patched.text()
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format={fmt}")
    assert response.status == 200
    body = await response.text()
    cues = check_subtitle_rules(body, fmt)
    assert len(cues) >= 5  # 28 s in cues of at most 7 s
    # Every word once, in order; the name opens the turn's first cue alone (SRT).
    shown = " ".join(" ".join(cue.lines) for cue in cues)
    lead = "S1: " if fmt == "srt" else ""
    second = "S2: " if fmt == "srt" else ""
    assert shown == f"{lead}{' '.join(LONG[0].text.split())} {second}No."
    assert cues[0].start_ms == 0
    assert cues[-2].end_ms == 28_000
    assert (cues[-1].start_ms, cues[-1].end_ms) == (28_200, 29_200)  # held for a second
    assert "Long talk" not in body.replace("NOTE Long talk", "")


async def test_transcript_txt_is_the_default(client: Client) -> None:
    record_id = await _transcribed(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript")
    assert response.headers["Content-Type"].startswith("text/plain")
    assert 'filename="Board meeting.txt"' in response.headers["Content-Disposition"]
    assert await response.text() == "\n".join(" ".join(u.text.split()) for u in SPEECH) + "\n"


async def test_transcript_json_is_the_structure(client: Client) -> None:
    record_id = await _transcribed(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format=json")
    assert response.headers["Content-Type"].startswith("application/json")
    structure = orjson.loads(await response.read())
    assert structure["version"] == 3
    assert [Utterance(**u) for u in structure["utterances"]] == list(SPEECH)


async def test_transcript_not_ready_is_409(client: Client) -> None:
    record = await upload(client)
    response = await client.get(f"/app/audiorecords/{record['id']}/transcript")
    assert response.status == 409
    assert (await response.json())["error"]["code"] == "not_ready"


async def test_bad_transcript_format_is_400(client: Client) -> None:
    record_id = await _transcribed(client)
    response = await client.get(f"/app/audiorecords/{record_id}/transcript?format=doc")
    assert response.status == 400


# --- resume ----------------------------------------------------------------------


async def test_owner_resumes_a_halted_record(client: Client) -> None:
    record = await upload(client)
    record_id = str(record["id"])
    await halt(client, record_id)
    response = await client.post(f"/app/audiorecords/{record_id}/resume")
    assert response.status == 200
    body = await response.json()
    assert body["halt"] is None
    assert body["stage"] == "uploaded"
    card = await (await client.get(f"/app/audiorecords/{record_id}")).json()
    assert [(e["step"], e["outcome"], e["origin"]) for e in card["timeline"]] == [
        ("normalize", "halted", "pipeline"), ("resume", "resumed", "human")]
    assert card["poll_after_ms"] == 4000
    # The record is claimable again, from the same stage.
    await advance(client, record_id)


async def test_resume_of_a_running_record_is_409(client: Client) -> None:
    record = await upload(client)
    response = await client.post(f"/app/audiorecords/{record['id']}/resume")
    assert response.status == 409
    assert (await response.json())["error"]["code"] == "not_halted"


async def test_resume_of_another_persons_record_is_404(client: Client) -> None:
    record = await upload(client)
    await halt(client, str(record["id"]))
    response = await client.post(f"/app/audiorecords/{record['id']}/resume",
                                 headers={"Remote-User": "bob"})
    assert response.status == 404
    card = await (await client.get(f"/app/audiorecords/{record['id']}")).json()
    assert card["halt"] is not None


@pytest.mark.parametrize("files_kind", ["local"])  # a bucket holds no symlinks
async def test_a_symlink_planted_in_a_record_folder_is_not_served(
        client: Client, data_dir: Path, tmp_path: Path) -> None:
    """A restored or tampered folder may hold a symlink under a stored name: the
    download refuses it instead of serving the file it points at."""
    record = await upload(client, AUDIO)
    (stored,) = stored_files(data_dir)
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"another person's file")
    stored.unlink()
    stored.symlink_to(secret)
    with structlog.testing.capture_logs() as logs:
        response = await client.get(f"/app/audiorecords/{record['id']}/file")
        body = await response.read()
    assert response.status == 404
    assert b"another person" not in body
    assert orjson.loads(body)["error"]["code"] == "not_found"
    [refused] = [e for e in logs if e["event"] == "record_file_refused"]
    assert refused["error"] == "UnsafePath"
    assert str(secret) not in str(logs)
    assert stored.name not in str(logs)


@pytest.mark.parametrize("files_kind", ["local"])
async def test_a_symlinked_record_folder_is_not_served(
        client: Client, data_dir: Path, tmp_path: Path) -> None:
    record = await upload(client, AUDIO)
    (stored,) = stored_files(data_dir)
    elsewhere = tmp_path / "elsewhere"
    stored.parent.rename(elsewhere)
    stored.parent.symlink_to(elsewhere, target_is_directory=True)
    response = await client.get(f"/app/audiorecords/{record['id']}/file")
    assert response.status == 404
    assert AUDIO not in await response.read()
