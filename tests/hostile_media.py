"""Hostile and borderline media, built in a few bytes (no ffmpeg needed to make them)."""

from __future__ import annotations

import struct
import zlib


def wav(*, rate: int = 16000, seconds: float = 1.0, declared_bytes: int | None = None) -> bytes:
    """Mono 16-bit PCM silence; `declared_bytes` overrides the data size in the header."""
    data = bytes(int(rate * seconds) * 2)
    size = len(data) if declared_bytes is None else declared_bytes
    return (b"RIFF" + struct.pack("<I", 36 + size) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", size) + data)


def one_hertz_wav() -> bytes:
    """100 KB of 8-bit samples at 1 Hz: a header declaring 27.8 hours."""
    data = bytes(100_000)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 1, 1, 1, 8)
            + b"data" + struct.pack("<I", len(data)) + data)


def hls_playlist(segment: str, *, live: bool = False) -> bytes:
    """An HLS playlist with one segment; `live` leaves out the end tag (it is reloaded forever)."""
    end = "" if live else "#EXT-X-ENDLIST\n"
    return (f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\n{segment}\n{end}").encode()


def live_playlist() -> bytes:
    """54 bytes: a live playlist whose segment never appears; ffmpeg's HLS demuxer waits for it
    in its reload loop forever."""
    return b"#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nsegment0.ts\n"


def ffconcat(target: str) -> bytes:
    return f"ffconcat version 1.0\nfile '{target}'\n".encode()


SUBTITLE = b"1\n00:00:00,000 --> 00:00:05,000\nhello\n\n2\n00:00:05,000 --> 00:10:00,000\nbye\n"


def png() -> bytes:
    """A 1x1 grey PNG."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))
