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
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioType:
    """One audio container: how ffmpeg names its demuxer, the extension an
    original of it is stored under, the type it is served as, and the other
    names senders give it (media types and extensions), which only help to
    recognise an audio document before its content is probed."""

    demuxer: str
    extension: str
    media_type: str
    other_media_types: tuple[str, ...] = ()
    other_extensions: tuple[str, ...] = ()
    # Formats originals of this type were stored under before the content
    # decided them (the sender's extension, which may also name video).
    earlier_formats: tuple[str, ...] = ()


# The one audio type table. Telegram sends OGG Opus (voice notes), MP3 and M4A;
# recorders add WAV, FLAC, WMA, AMR, CAF.
AUDIO_TYPES: tuple[AudioType, ...] = (
    AudioType(demuxer="wav", extension=".wav", media_type="audio/wav",
              other_media_types=("audio/x-wav", "audio/wave")),
    AudioType(demuxer="w64", extension=".w64", media_type="audio/x-w64"),
    AudioType(demuxer="mp3", extension=".mp3", media_type="audio/mpeg",
              other_media_types=("audio/mp3",)),
    AudioType(demuxer="ogg", extension=".ogg", media_type="audio/ogg",
              other_media_types=("audio/opus", "application/ogg"),
              other_extensions=(".oga", ".opus")),
    AudioType(demuxer="flac", extension=".flac", media_type="audio/flac",
              other_media_types=("audio/x-flac",)),
    AudioType(demuxer="mov,mp4,m4a,3gp,3g2,mj2", extension=".m4a", media_type="audio/mp4",
              other_media_types=("audio/x-m4a", "audio/m4a"),
              other_extensions=(".3ga",), earlier_formats=("mp4",)),
    AudioType(demuxer="matroska,webm", extension=".mka", media_type="audio/x-matroska",
              other_media_types=("audio/webm",), other_extensions=(".weba",),
              earlier_formats=("webm",)),
    AudioType(demuxer="aac", extension=".aac", media_type="audio/aac"),
    AudioType(demuxer="amr", extension=".amr", media_type="audio/amr"),
    AudioType(demuxer="asf", extension=".wma", media_type="audio/x-ms-wma"),
    AudioType(demuxer="aiff", extension=".aiff", media_type="audio/aiff",
              other_extensions=(".aif",)),
    AudioType(demuxer="caf", extension=".caf", media_type="audio/x-caf"),
)
AUDIO_CONTAINERS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {t.demuxer: (t.extension, t.media_type) for t in AUDIO_TYPES})
# Media types by stored format (extension without its dot), for serving originals,
# including those stored before the content decided the extension.
MEDIA_TYPES: Mapping[str, str] = MappingProxyType({
    **{ext.lstrip("."): t.media_type for t in AUDIO_TYPES
       for ext in (*t.other_extensions, *t.earlier_formats)},
    **{t.extension.lstrip("."): t.media_type for t in AUDIO_TYPES},
})
# What a sender may call audio: for recognising a Telegram document as audio.
SENDER_EXTENSIONS = frozenset(
    ext for t in AUDIO_TYPES for ext in (t.extension, *t.other_extensions))
SENDER_MEDIA_TYPES: Mapping[str, str] = MappingProxyType(
    {mime: t.extension for t in AUDIO_TYPES for mime in (t.media_type, *t.other_media_types)})
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
    """Container, duration, sample rate and channels of the first audio stream, as a
    JSON-able dict.

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
                    "sample_rate": int(stream.codec_context.sample_rate or 0),
                    "channels": int(stream.codec_context.channels or 0)}
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
