"""ffmpeg as a subprocess: normalization to OGG Opus, part cutting, probes.

The normalized copy is mono, or stereo when the original's two channels
carry two different signals (`measure_channels`, decided by
`speakers.channels`): the original is decoded once more for it, streamed as
8 kHz PCM through a pipe, so memory never follows the file's length.

The binary comes from the `imageio-ffmpeg` wheel (a static build with
libopus) unless `[ffmpeg] path` names another, so `pip install` is enough.
The process is killed when the awaiting task is cancelled (a step over its
time limit, a shutdown). Failure kinds are decided here, where ffmpeg's
answer is understood (P17): input it cannot decode is permanent ("not
audio"), and so is input whose parameters it cannot convert (a resampler or
encoder that cannot be set up for them); a crash, a full disk or anything
unclassified is transient.
Reasons never carry paths or ffmpeg's own text (it names files).

Every input is opened through `media.ffmpeg_input_args` (the `file`
protocol and the audio demuxers only). Probes run `providers.media` as a
child process, at most `ffmpeg.probe_concurrency` at once, each killed at
`ffmpeg.probe_timeout_seconds`: a hostile file costs at most that, in a
process, never a thread of the service's pools.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.ports import AudioProbe, ProgressCallback
from transcriber.providers import media
from transcriber.providers.speakers import ChannelMeter, ChannelReport, kept_channels
from transcriber.settings import FfmpegSettings

log = structlog.get_logger(__name__)

NOT_AUDIO = media.NOT_AUDIO
TOO_SLOW = "not audio (it could not be examined in time)"
_STDERR_KEEP = 8192
# ffmpeg writes a `-progress` block this often (seconds of wall time).
PROGRESS_PERIOD_SECONDS = 2
# libopus's encoder effort, 0..10: ffmpeg's default, 10. Level 0 encodes 2.3 times
# cheaper but cost more than it saved: its copy of the overhead bench's hard audio left
# 13.6 s to the coverage check's re-decoding (docs/recognition.md, "Normalization").
OPUS_COMPRESSION_LEVEL = 10
# A pause a long record may be cut in: this quiet for this long.
PAUSE_NOISE = "-35dB"
PAUSE_MIN_SECONDS = 0.5
_SILENCE_RE = re.compile(r"silence_(start|end): (-?[0-9.]+)")
_PROBE_OUTPUT_MAX = 4096
# The channels are measured at this rate: enough for levels and correlation of speech.
MEASURE_RATE = 8000
_MEASURE_CHUNK = MEASURE_RATE * 2 * 4 * 20  # 20 s of stereo float samples
# ffmpeg's description of its input stream: "Stream #0:0: Audio: mp3, 16000 Hz, mono, fltp".
_INPUT_LAYOUT = re.compile(r"Stream #0:\d+[^:]*: Audio: [^,]+, \d+ Hz, ([^,\n]+)")

# ffmpeg's wording when the input is not something it can decode as audio.
_UNDECODABLE = re.compile(
    r"Invalid data found when processing input"
    r"|does not contain any stream"
    r"|matches no streams"
    r"|could not find codec parameters"
    r"|Decoder \(codec [^)]*\) not found"
    r"|Unknown input format"
    r"|Failed to find two consecutive MPEG audio frames"
    r"|Format not on whitelist"
    r"|Protocol not on whitelist",
    re.IGNORECASE,
)
# ffmpeg's wording when the input decodes but cannot be converted: its declared
# parameters are out of any range the resampler or encoder takes (a WAV declaring
# 2 147 483 647 Hz fails here at once). The same file fails the same way on
# every try, so it is permanent; a crash or a full disk never reads like this.
_UNCONVERTIBLE = re.compile(
    r"Failed to initialize resampler"
    r"|Error reinitializing filters"
    r"|Could not open encoder"
    r"|Error while opening encoder"
    r"|Error initializing output stream",
    re.IGNORECASE,
)
UNCONVERTIBLE = "audio that cannot be converted (its format parameters are out of range)"
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
    if _UNCONVERTIBLE.search(stderr):
        return PermanentFailure(UNCONVERTIBLE)
    return TransientFailure(f"ffmpeg failed with exit code {returncode}")


class FfmpegTranscoder:
    """The `Transcoder` port, plus cutting parts for long records."""

    def __init__(self, settings: FfmpegSettings) -> None:
        self._settings = settings
        self._exe: str | None = None
        self._probes = asyncio.Semaphore(settings.probe_concurrency)
        self.probe_command: list[str] = [sys.executable, "-m", "transcriber.providers.media"]
        """The child that probes one file (its path appended); tests replace it."""

    @property
    def executable(self) -> str:
        if self._exe is None:
            self._exe = ffmpeg_executable(self._settings)
        return self._exe

    async def normalize(self, source: Path, target: Path, *, max_seconds: int,
                        on_progress: ProgressCallback | None = None, channels: int = 1) -> None:
        """OGG Opus at speech bitrate, mono (or both channels of a stereo call:
        `channels=2`); the first audio stream only, cut at `max_seconds`.

        `on_progress` hears the converted length (ms) from ffmpeg's `-progress` lines.
        """
        progress = ["-progress", "pipe:1", "-stats_period", str(PROGRESS_PERIOD_SECONDS)] \
            if on_progress is not None else []
        await self._run([
            *progress, *media.ffmpeg_input_args(source), "-map", "0:a:0", "-vn", "-sn", "-dn",
            "-t", str(max_seconds),
            "-ac", str(channels), "-c:a", "libopus", "-b:a", self._settings.bitrate,
            "-application", "voip", "-compression_level", str(OPUS_COMPRESSION_LEVEL),
            "-f", "ogg", str(target),
        ], on_progress=on_progress)

    async def cut(self, source: Path, target: Path, *, start_ms: int, length_ms: int,
                  channel: int | None = None) -> int:
        """A part of an OGG Opus file by stream copy (no re-encoding); with `channel`,
        that one channel of a stereo copy as 16 kHz mono WAV (the recognizer's own
        rate: decoded once, not encoded a second time). Returns the part's measured
        duration (ms)."""
        output = ["-c", "copy", "-f", "ogg"] if channel is None else [
            "-af", f"pan=mono|c0=c{channel}", "-ar", "16000", "-c:a", "pcm_s16le", "-f", "wav"]
        await self._run([
            "-ss", f"{start_ms / 1000:.3f}", "-t", f"{length_ms / 1000:.3f}",
            *media.ffmpeg_input_args(source), "-map", "0:a:0", *output, str(target),
        ])
        return await self.probe_duration_ms(target)

    async def samples(self, source: Path, *, start_ms: int, length_ms: int) -> bytes:
        """The `DecodesSamples` port: `length_ms` of `source` from `start_ms` as 16 kHz
        mono PCM. A file still being written (an upload going on) decodes to its last
        whole frame: ffmpeg says the file ended early and exits 0 with what it had."""
        pieces: list[bytes] = []
        await self._run([
            "-ss", f"{start_ms / 1000:.3f}", "-t", f"{length_ms / 1000:.3f}",
            *media.ffmpeg_input_args(source), "-map", "0:a:0", "-vn", "-sn", "-dn",
            "-ac", "1", "-ar", "16000", "-f", "s16le", "-",
        ], on_stdout=pieces.append)
        return b"".join(pieces)

    async def input_channels(self, source: Path) -> int | None:
        """How many channels the first audio stream has, from ffmpeg's description of
        its input (it reads the header and a few packets); None: not understood."""
        stderr = await self._run([
            *media.ffmpeg_input_args(source), "-map", "0:a:0", "-t", "0.05", "-f", "null", "-",
        ], loglevel="info")
        return channels_in_log(stderr.decode("utf-8", "replace"))

    async def measure_channels(self, source: Path, *, max_seconds: int) -> ChannelReport | None:
        """Whether a two-channel original carries two signals (`speakers.channels`);
        None for any other channel count (mixed down to mono as before)."""
        if await self.input_channels(source) != 2:
            return None
        meter = ChannelMeter(MEASURE_RATE)
        await self._run([
            *media.ffmpeg_input_args(source), "-map", "0:a:0", "-vn", "-sn", "-dn",
            "-t", str(max_seconds), "-ac", "2", "-ar", str(MEASURE_RATE), "-f", "f32le", "-",
        ], on_stdout=lambda chunk: meter.feed(np.frombuffer(chunk, dtype="<f4")))
        report = meter.report()
        log.info("channels_measured", verdict=report.verdict.value,
                 correlation=report.correlation, level_spread_db=report.level_spread_db)
        return report

    async def kept_channels(self, source: Path, *, max_seconds: int) -> int:
        return kept_channels(await self.measure_channels(source, max_seconds=max_seconds))

    async def pauses(self, source: Path) -> list[tuple[int, int]]:
        """The silences of the audio, (start, end) in ms: where a long record is cut."""
        stderr = await self._run([
            *media.ffmpeg_input_args(source), "-map", "0:a:0", "-vn", "-sn", "-dn",
            "-af", f"silencedetect=noise={PAUSE_NOISE}:d={PAUSE_MIN_SECONDS}", "-f", "null", "-",
        ], loglevel="info")
        return parse_silences(stderr.decode("utf-8", "replace"))

    async def probe(self, path: Path) -> AudioProbe:
        return await self._probe(path, too_slow=PermanentFailure)

    async def probe_duration_ms(self, path: Path) -> int:
        # Our own normalized copy: running out of time says the machine is busy, not
        # that the file is hostile.
        return (await self._probe(path, too_slow=TransientFailure)).duration_ms

    async def _probe(self, path: Path,
                     too_slow: type[PermanentFailure] | type[TransientFailure]) -> AudioProbe:
        async with self._probes:
            try:
                process = await asyncio.create_subprocess_exec(
                    *self.probe_command, str(path),
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL,
                )
            except OSError as exc:
                raise TransientFailure(f"the probe could not start ({type(exc).__name__})"
                                       ) from None
            try:
                async with asyncio.timeout(self._settings.probe_timeout_seconds):
                    output, _ = await process.communicate()
            except TimeoutError:
                await _kill(process)
                log.warning("probe_timed_out", seconds=self._settings.probe_timeout_seconds)
                raise too_slow(TOO_SLOW) from None
            except BaseException:
                await _kill(process)
                raise
        return read_probe_answer(process.returncode, output)

    async def _run(self, args: list[str], *, on_progress: ProgressCallback | None = None,
                   loglevel: str = "error",
                   on_stdout: Callable[[bytes], None] | None = None) -> bytes:
        command = [self.executable, "-nostdin", "-hide_banner", "-nostats", "-loglevel", loglevel,
                   "-y", *args]
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE if on_progress or on_stdout
                else asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise TransientFailure("disk full while transcoding") from None
            raise TransientFailure(f"ffmpeg could not start ({type(exc).__name__})") from None
        try:
            if (on_progress or on_stdout) is not None and process.stdout is not None:
                stderr_task = asyncio.ensure_future(_read_all(process.stderr))
                try:
                    if on_stdout is not None:
                        await _follow_chunks(process.stdout, on_stdout)
                    elif on_progress is not None:
                        await _follow_progress(process.stdout, on_progress)
                    stderr_bytes = await stderr_task
                finally:
                    stderr_task.cancel()
                await process.wait()
            else:
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
        return stderr_bytes


def parse_silences(log: str) -> list[tuple[int, int]]:
    """Pure: (start, end) ms of each silence silencedetect logged; one open at the end
    (the audio ends in silence) is left out: there is nothing to cut after it."""
    silences = []
    start: float | None = None
    for match in _SILENCE_RE.finditer(log):
        value = max(float(match.group(2)), 0.0)
        if match.group(1) == "start":
            start = value
        elif start is not None:
            silences.append((round(start * 1000), round(value * 1000)))
            start = None
    return silences


def progress_ms(line: bytes) -> int | None:
    """Pure: the converted length from one `-progress` line (`out_time_us=...`), if it has it."""
    key, _, value = line.decode("ascii", "replace").strip().partition("=")
    if key not in ("out_time_us", "out_time_ms"):  # both are microseconds, in every version
        return None
    try:
        micros = int(value)
    except ValueError:
        return None  # "N/A" before the first packet
    return max(micros // 1000, 0)


async def _follow_progress(stream: asyncio.StreamReader, on_progress: ProgressCallback) -> None:
    last = -1
    while line := await stream.readline():
        done = progress_ms(line)
        if done is not None and done > last:
            last = done
            await on_progress(done)


async def _follow_chunks(stream: asyncio.StreamReader, on_chunk: Callable[[bytes], None]) -> None:
    # Whole float samples only: a read may end inside one.
    rest = b""
    while chunk := await stream.read(_MEASURE_CHUNK):
        data = rest + chunk
        whole = len(data) - len(data) % 8
        rest = data[whole:]
        if whole:
            on_chunk(data[:whole])


def channels_in_log(log: str) -> int | None:
    """Pure: the channel count of the first audio stream ffmpeg described
    ("mono", "stereo", "2 channels", "5.1", …), or None."""
    match = _INPUT_LAYOUT.search(log)
    if match is None:
        return None
    layout = match.group(1).strip()
    named = {"mono": 1, "stereo": 2, "downmix": 2, "2.1": 3, "quad": 4, "5.0": 5, "5.1": 6,
             "7.1": 8}
    if layout in named:
        return named[layout]
    counted = re.fullmatch(r"(\d+) channels.*", layout)
    if counted is not None:
        return int(counted.group(1))
    return None if "(" not in layout else named.get(layout.split("(")[0])


async def _read_all(stream: asyncio.StreamReader | None) -> bytes:
    return b"" if stream is None else await stream.read()


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    await asyncio.shield(process.wait())


def read_probe_answer(returncode: int | None, output: bytes) -> AudioProbe:
    """Pure: the child's answer, or the failure it stands for."""
    if returncode != 0:
        # A crash in a demuxer (a signal) or an unusable child: not a verdict on the file.
        raise TransientFailure(f"the probe failed with exit code {returncode}")
    try:
        answer = orjson.loads(output[:_PROBE_OUTPUT_MAX])
    except orjson.JSONDecodeError:
        raise TransientFailure("the probe answered nonsense") from None
    if not isinstance(answer, dict):
        raise TransientFailure("the probe answered nonsense")
    error = answer.get("error")
    if error == "permanent":
        raise PermanentFailure(str(answer.get("reason", NOT_AUDIO)))
    if error is not None:
        raise TransientFailure(str(answer.get("reason", "the probe failed")))
    extension = media.extension_for(str(answer.get("container")))
    duration_ms, sample_rate = answer.get("duration_ms"), answer.get("sample_rate")
    channels = answer.get("channels")
    if (extension is None or not isinstance(duration_ms, int)
            or not isinstance(sample_rate, int) or not isinstance(channels, int)):
        raise TransientFailure("the probe answered nonsense")
    return AudioProbe(extension=extension, duration_ms=duration_ms, sample_rate=sample_rate,
                      channels=channels)
