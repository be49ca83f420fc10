"""ffmpeg as a subprocess: normalization to OGG Opus mono, part cutting, duration probes.

The binary comes from the `imageio-ffmpeg` wheel (a static build with
libopus) unless `[ffmpeg] path` names another, so `pip install` is enough.
The process is killed when the awaiting task is cancelled (a step over its
time limit, a shutdown). Failure kinds are decided here, where ffmpeg's
answer is understood (P17): input it cannot decode is permanent ("not
audio"); a crash, a full disk or anything unclassified is transient.
Reasons never carry paths or ffmpeg's own text (it names files).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import re
from pathlib import Path

import av
import structlog

from transcriber.errors import PermanentFailure, TransientFailure
from transcriber.settings import FfmpegSettings

log = structlog.get_logger(__name__)

NOT_AUDIO = "not audio"
_STDERR_KEEP = 8192

# ffmpeg's wording when the input is not something it can decode as audio.
_UNDECODABLE = re.compile(
    r"Invalid data found when processing input"
    r"|does not contain any stream"
    r"|matches no streams"
    r"|could not find codec parameters"
    r"|Decoder \(codec [^)]*\) not found"
    r"|Unknown input format"
    r"|Failed to find two consecutive MPEG audio frames",
    re.IGNORECASE,
)
_DISK_FULL = re.compile(r"No space left on device|Disk quota exceeded", re.IGNORECASE)


def ffmpeg_executable(settings: FfmpegSettings) -> str:
    if settings.path is not None:
        return str(settings.path)
    import imageio_ffmpeg  # noqa: PLC0415 - the wheel is only needed when no path is set

    return str(imageio_ffmpeg.get_ffmpeg_exe())


def classify_ffmpeg_failure(returncode: int, stderr: str) -> PermanentFailure | TransientFailure:
    """Pure: the failure kind of a finished ffmpeg run that did not succeed."""
    if returncode < 0:
        return TransientFailure(f"ffmpeg was killed by signal {-returncode}")
    if _DISK_FULL.search(stderr):
        return TransientFailure("disk full while transcoding")
    if _UNDECODABLE.search(stderr):
        return PermanentFailure(NOT_AUDIO)
    return TransientFailure(f"ffmpeg failed with exit code {returncode}")


class FfmpegTranscoder:
    """The `Transcoder` port, plus cutting parts for long records."""

    def __init__(self, settings: FfmpegSettings) -> None:
        self._settings = settings
        self._exe: str | None = None

    @property
    def executable(self) -> str:
        if self._exe is None:
            self._exe = ffmpeg_executable(self._settings)
        return self._exe

    async def normalize(self, source: Path, target: Path) -> None:
        """OGG Opus, mono, speech bitrate; the first audio stream only."""
        await self._run([
            "-i", str(source), "-map", "0:a:0", "-vn", "-sn", "-dn",
            "-ac", "1", "-c:a", "libopus", "-b:a", self._settings.bitrate,
            "-application", "voip", "-f", "ogg", str(target),
        ])

    async def cut(self, source: Path, target: Path, *, start_ms: int, length_ms: int) -> None:
        """A part of an OGG Opus file by stream copy (no re-encoding)."""
        await self._run([
            "-ss", f"{start_ms / 1000:.3f}", "-t", f"{length_ms / 1000:.3f}",
            "-i", str(source), "-map", "0:a:0", "-c", "copy", "-f", "ogg", str(target),
        ])

    async def probe_duration_ms(self, path: Path) -> int:
        return await asyncio.to_thread(probe_duration_ms, path)

    async def _run(self, args: list[str]) -> None:
        command = [self.executable, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args]
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise TransientFailure("disk full while transcoding") from None
            raise TransientFailure(f"ffmpeg could not start ({type(exc).__name__})") from None
        try:
            _, stderr_bytes = await process.communicate()
        except BaseException:
            # Cancelled (time limit, shutdown): the subprocess must not outlive the step.
            await _kill(process)
            raise
        if process.returncode != 0:
            stderr = stderr_bytes[-_STDERR_KEEP:].decode("utf-8", "replace")
            failure = classify_ffmpeg_failure(process.returncode or 0, stderr)
            log.warning("ffmpeg_failed", returncode=process.returncode,
                        kind=type(failure).__name__)
            raise failure


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    await asyncio.shield(process.wait())


def probe_duration_ms(path: Path) -> int:
    """Duration of the first audio stream in ms, by PyAV (no ffprobe needed).

    Raises `PermanentFailure("not audio")` when the file is not readable audio.
    """
    try:
        with av.open(str(path)) as container:
            streams = container.streams.audio
            if not streams:
                raise PermanentFailure(NOT_AUDIO)
            if container.duration is not None and container.duration > 0:
                return int(container.duration * 1000 // av.time_base)
            stream = streams[0]
            if stream.duration is not None and stream.time_base is not None:
                return int(stream.duration * stream.time_base * 1000)
            return _decode_duration_ms(container)
    except PermanentFailure:
        raise
    except FileNotFoundError:
        raise TransientFailure("audio file missing") from None
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EIO):
            raise TransientFailure(f"cannot read audio ({type(exc).__name__})") from None
        raise PermanentFailure(NOT_AUDIO) from None
    except (av.FFmpegError, ValueError, IndexError):
        raise PermanentFailure(NOT_AUDIO) from None


def _decode_duration_ms(container: av.container.InputContainer) -> int:
    """Last resort for streams without a declared duration: read the packets."""
    end = 0.0
    for packet in container.demux(container.streams.audio[0]):
        if packet.pts is not None and packet.duration is not None and packet.time_base:
            end = max(end, float((packet.pts + packet.duration) * packet.time_base))
    if end <= 0:
        raise PermanentFailure(NOT_AUDIO)
    return int(end * 1000)
