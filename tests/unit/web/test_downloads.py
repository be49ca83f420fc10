"""Download names and Content-Disposition."""

from __future__ import annotations

from urllib.parse import unquote

from transcriber.web.downloads import audio_type, content_disposition, download_name


def test_disposition_has_ascii_fallback_and_exact_utf8_name() -> None:
    header = content_disposition('звонок "1"; x.mp3')
    assert header.startswith('attachment; filename="')
    fallback = header.split('filename="', 1)[1].split('"', 1)[0]
    assert fallback.isascii()
    assert '"' not in fallback
    assert ";" not in fallback
    encoded = header.split("filename*=UTF-8''", 1)[1]
    assert unquote(encoded) == 'звонок "1"; x.mp3'
    assert all(ch not in encoded for ch in ' ";')


def test_disposition_drops_control_characters() -> None:
    header = content_disposition("a\r\nSet-Cookie: x.wav")
    assert "\r" not in header
    assert "\n" not in header


def test_download_names() -> None:
    assert download_name("talk.MP3", "01rec", "mp3") == "talk.mp3"
    assert download_name("talk.mp3", "01rec", "ogg") == "talk.ogg"
    assert download_name("", "01rec", "wav") == "01rec.wav"
    assert download_name("noext", "01rec", "") == "noext"


def test_audio_types() -> None:
    assert audio_type("ogg") == "audio/ogg"
    assert audio_type("MP3") == "audio/mpeg"
    assert audio_type("exe") == "application/octet-stream"
