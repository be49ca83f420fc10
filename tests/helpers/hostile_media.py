"""Hostile and borderline media, built in a few bytes (no ffmpeg needed to make them,
except `lying_flac`, which patches what ffmpeg encodes)."""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path


def wav(*, rate: int = 16000, seconds: float = 1.0, declared_bytes: int | None = None,
        channels: int = 1) -> bytes:
    """16-bit PCM silence; `declared_bytes` overrides the data size in the header."""
    data = bytes(int(rate * seconds) * 2 * channels)
    size = len(data) if declared_bytes is None else declared_bytes
    byte_rate = rate * 2 * channels & 0xFFFFFFFF
    return (b"RIFF" + struct.pack("<I", 36 + size) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, byte_rate,
                                    2 * channels, 16)
            + b"data" + struct.pack("<I", size) + data)


def absurd_rate_wav() -> bytes:
    """16 000 bytes of samples under a header declaring 2 147 483 647 Hz (the largest
    32-bit rate): ffmpeg reads it but cannot set a resampler up for it, on every try."""
    return wav(rate=2_147_483_647, seconds=0, declared_bytes=16_000) + bytes(16_000)


def lying_flac(ffmpeg: str, path: Path, *, seconds: int, declared_seconds: int,
               rate: int = 8000) -> Path:
    """A compression bomb: `seconds` of digital silence as FLAC in the largest frames
    (a few KB for minutes, ~36 KB for six hours), its STREAMINFO rewritten to declare
    `declared_seconds`: a probe reading the header sees a short record."""
    subprocess.run([ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
                    "-i", f"anullsrc=r={rate}:cl=mono", "-t", str(seconds), "-c:a", "flac",
                    "-frame_size", "65535", str(path)], check=True)
    raw = bytearray(path.read_bytes())
    assert raw[:4] == b"fLaC"
    assert raw[4] & 0x7F == 0  # STREAMINFO is the first block
    # STREAMINFO after its 4-byte block header: sizes (10 bytes), then 64 bits of
    # rate (20) | channels-1 (3) | bits-1 (5) | total samples (36).
    at = 8 + 10
    packed = int.from_bytes(raw[at:at + 8], "big")
    packed = packed & ~((1 << 36) - 1) | declared_seconds * rate
    raw[at:at + 8] = packed.to_bytes(8, "big")
    path.write_bytes(bytes(raw))
    return path


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
