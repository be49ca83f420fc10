"""What is opened as audio: the container allow-list, and the probe run as its own process.

An upload is opened only with the `file` protocol and only by one of the
audio demuxers below; every other demuxer ffmpeg has (HLS and DASH
playlists that fetch other files, `concat`, image sequences, subtitles,
raw data, network protocols) is refused before it reads a byte. The
container is decided from the content, and the original is stored under
the extension this table maps it to, never the sender's.

`python -m transcriber.providers.media <path>` probes one file and prints
one JSON line; the service runs it as a subprocess it kills at a deadline,
so a file that makes a demuxer loop or stall costs at most that deadline
and no thread of the service.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

# Demuxer name as ffmpeg reports it -> the extension the original is stored under and the
# type it is served as. Telegram sends OGG Opus (voice notes), MP3 and M4A; recorders add
# WAV, FLAC, WMA, AMR, CAF.
AUDIO_CONTAINERS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "wav": (".wav", "audio/wav"),
    "w64": (".w64", "audio/x-w64"),
    "mp3": (".mp3", "audio/mpeg"),
    "ogg": (".ogg", "audio/ogg"),
    "flac": (".flac", "audio/flac"),
    "mov,mp4,m4a,3gp,3g2,mj2": (".m4a", "audio/mp4"),
    "matroska,webm": (".mka", "audio/x-matroska"),
    "aac": (".aac", "audio/aac"),
    "amr": (".amr", "audio/amr"),
    "asf": (".wma", "audio/x-ms-wma"),
    "aiff": (".aiff", "audio/aiff"),
    "caf": (".caf", "audio/x-caf"),
})
# Media types by stored format (extension without its dot), for serving originals.
MEDIA_TYPES: Mapping[str, str] = MappingProxyType(
    {ext.lstrip("."): mime for ext, mime in AUDIO_CONTAINERS.values()})
# ffmpeg matches a whitelist entry against any of a demuxer's comma-separated names.
FORMAT_WHITELIST = ",".join(name.split(",")[0] for name in AUDIO_CONTAINERS)
PROTOCOL_WHITELIST = "file"
OPEN_OPTIONS: Mapping[str, str] = MappingProxyType({
    "protocol_whitelist": PROTOCOL_WHITELIST,
    "format_whitelist": FORMAT_WHITELIST,
})
NOT_AUDIO = "not audio"


def extension_for(demuxer: str) -> str | None:
    """The stored extension (with its dot) of a detected demuxer; None: not an audio container."""
    known = AUDIO_CONTAINERS.get(demuxer)
    return known[0] if known else None


def demuxer_for(extension: str) -> str | None:
    """The demuxer to force for a stored file, by its extension (None: unknown, let ffmpeg
    detect within the whitelist; originals stored before the allow-list)."""
    for demuxer, (ext, _) in AUDIO_CONTAINERS.items():
        if ext == extension.lower():
            return demuxer.split(",")[0]
    return None


def ffmpeg_input_args(source: Path) -> list[str]:
    """The options that restrict how ffmpeg opens `source`, and the `-i` itself."""
    forced = demuxer_for(source.suffix)
    return [
        "-protocol_whitelist", PROTOCOL_WHITELIST, "-format_whitelist", FORMAT_WHITELIST,
        *(["-f", forced] if forced else []), "-i", str(source),
    ]


# -- the probe (runs in the child process) ---------------------------------------------


def probe(path: Path) -> dict[str, Any]:
    """Container, duration and sample rate of the first audio stream, as a JSON-able dict.

    On failure: `{"error": "permanent" | "transient", "reason": ...}`; reasons
    never carry the path or ffmpeg's text.
    """
    import av  # noqa: PLC0415 - only the child process needs PyAV loaded

    try:
        with av.open(str(path), options=dict(OPEN_OPTIONS)) as container:
            demuxer = container.format.name
            if extension_for(demuxer) is None or not container.streams.audio:
                return {"error": "permanent", "reason": NOT_AUDIO}
            stream = container.streams.audio[0]
            return {"container": demuxer, "duration_ms": _duration_ms(container, stream),
                    "sample_rate": int(stream.codec_context.sample_rate or 0)}
    except FileNotFoundError:
        return {"error": "transient", "reason": "audio file missing"}
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EIO):
            return {"error": "transient", "reason": f"cannot read audio ({type(exc).__name__})"}
        return {"error": "permanent", "reason": NOT_AUDIO}
    except (av.FFmpegError, ValueError, IndexError, _NoDuration):
        return {"error": "permanent", "reason": NOT_AUDIO}


class _NoDuration(Exception):
    pass


def _duration_ms(container: Any, stream: Any) -> int:
    import av  # noqa: PLC0415

    if container.duration is not None and container.duration > 0:
        return int(container.duration * 1000 // av.time_base)
    if stream.duration is not None and stream.time_base is not None:
        return int(stream.duration * stream.time_base * 1000)
    # Last resort for streams without a declared duration: read the packets.
    end = 0.0
    for packet in container.demux(stream):
        if packet.pts is not None and packet.duration is not None and packet.time_base:
            end = max(end, float((packet.pts + packet.duration) * packet.time_base))
    if end <= 0:
        raise _NoDuration
    return int(end * 1000)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        return 2
    sys.stdout.buffer.write(orjson.dumps(probe(Path(argv[0]))) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
