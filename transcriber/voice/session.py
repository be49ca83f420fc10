"""One Wyoming client's voice commands: its events in, its answers out.

The exchange (https://github.com/OHF-Voice/wyoming, "asr"): `describe` → `info`;
`transcribe` (the language, optional) → `audio-start` → `audio-chunk`s →
`audio-stop` → `transcript`. A client may send several commands on one connection;
each `audio-start` begins a new one. Audio in any rate, width and channel count the
protocol's converter handles is turned into 16 kHz mono 16-bit PCM chunk by chunk,
so what is held is what the recognizer takes, and it is bounded: a command longer
than `max_audio_seconds` is refused the moment it passes the bound.

A `Refused` answer ends the connection with an `error` event (its code says why);
events this door does not serve (a satellite's `run-pipeline`, say) are ignored, as
the protocol asks of a peer that does not know them.
"""

from __future__ import annotations

import io
import time
import wave
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.info import AsrModel, AsrProgram, Attribution, Describe, Info

from transcriber.core.errors import TranscriberError
from transcriber.core.observability import WYOMING_REQUESTS, WYOMING_SECONDS
from transcriber.ports import Capabilities, RecognizesSamples

log = structlog.get_logger(__name__)

RATE = 16_000
WIDTH = 2
CHANNELS = 1
# What a client may send: the converter's widths, mono or stereo, telephone to studio rates.
RATES = range(8_000, 96_001)
WIDTHS = (1, 2, 3, 4)
CHANNEL_COUNTS = (1, 2)
PING, PONG = "ping", "pong"


# Keeps a transcribed command (its 16 kHz mono PCM, the language asked for) as a record.
Archive = Callable[[bytes, str | None], Awaitable[None]]


class Refused(TranscriberError):
    """The client is answered an `error` event with this code and text, and let go."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


def spoken_language(asked: str | None, languages: tuple[str, ...]) -> str | None:
    """Pure: the language a `transcribe` names as the recognizer's code (`en_US`,
    `en-US` and `EN` are `en`), None to detect it (none named, or `auto`). One the
    recognizer does not take is refused: a wrong guess would answer wrong words."""
    if asked is None or not asked.strip():
        return None
    code = asked.strip().replace("_", "-").split("-", 1)[0].lower()
    if code == "auto":
        return None
    if code not in languages:
        raise Refused("unsupported-language", f"language {code!r} is not recognized here")
    return code


def checked_format(start: AudioStart | AudioChunk) -> None:
    """Pure: refuse audio the converter cannot turn into the recognizer's PCM."""
    if start.rate not in RATES or start.width not in WIDTHS or start.channels not in (
            CHANNEL_COUNTS):
        raise Refused("unsupported-audio",
                      "audio must be 8-96 kHz, 8-32 bit, mono or stereo PCM")


def wav_bytes(pcm: bytes) -> bytes:
    """Pure: 16 kHz mono 16-bit PCM as a WAV file (what an archived command is stored as)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(CHANNELS)
        wav.setsampwidth(WIDTH)
        wav.setframerate(RATE)
        wav.writeframes(pcm)
    return out.getvalue()


def info_event(capabilities: Capabilities, *, version: str) -> Event:
    """What `describe` is answered: one speech-to-text program, the configured model
    and the languages it takes."""
    attribution = Attribution(name="transcriber", url="")
    model = AsrModel(name=capabilities.model, attribution=attribution, installed=True,
                     description=f"{capabilities.provider} {capabilities.model}",
                     version=None, languages=list(capabilities.languages))
    program = AsrProgram(name="transcriber", attribution=attribution, installed=True,
                         description="transcriber: a self-hosted transcription archive",
                         version=version, models=[model])
    return Info(asr=[program]).event()


@dataclass(slots=True)
class _Command:
    """The voice command being received."""

    language: str | None
    converter: AudioChunkConverter
    pcm: bytearray


class Session:
    """One connection's state: `answer(event)` returns the events to send back."""

    def __init__(self, *, recognizer: RecognizesSamples | None, capabilities: Capabilities,
                 info: Event, max_audio_seconds: int) -> None:
        self._recognizer = recognizer
        self._capabilities = capabilities
        self._info = info
        self._max_bytes = max_audio_seconds * RATE * WIDTH * CHANNELS
        self._language: str | None = None
        self._command: _Command | None = None
        # The last transcribed command, until the server has archived it (if it does).
        self.transcribed: tuple[bytes, str | None] | None = None

    async def answer(self, event: Event) -> list[Event]:
        try:
            return await self._answer(event)
        except (KeyError, TypeError, ValueError) as exc:
            # The package reads an event's fields without checking them.
            raise Refused("malformed", f"malformed {event.type} event") from exc

    async def _answer(self, event: Event) -> list[Event]:
        if Describe.is_type(event.type):
            return [self._info]
        if event.type == PING:
            return [Event(type=PONG, data=event.data)]
        if Transcribe.is_type(event.type):
            self._language = spoken_language(Transcribe.from_event(event).language,
                                             self._capabilities.languages)
            return []
        if AudioStart.is_type(event.type):
            start = AudioStart.from_event(event)
            checked_format(start)
            self._command = _Command(
                language=self._language, pcm=bytearray(),
                converter=AudioChunkConverter(rate=RATE, width=WIDTH, channels=CHANNELS))
            return []
        if AudioChunk.is_type(event.type):
            self._take(AudioChunk.from_event(event))
            return []
        if AudioStop.is_type(event.type):
            return [await self._transcribe()]
        return []

    def _take(self, chunk: AudioChunk) -> None:
        command = self._command
        if command is None:
            raise Refused("malformed", "audio-chunk before audio-start")
        checked_format(chunk)
        frame = chunk.width * chunk.channels
        if len(chunk.audio) % frame:
            raise Refused("malformed", "audio-chunk is not whole samples")
        converted = command.converter.convert(chunk).audio
        if len(command.pcm) + len(converted) > self._max_bytes:
            raise Refused("too-long", f"a voice command is at most "
                          f"{self._max_bytes // (RATE * WIDTH)} s of audio")
        command.pcm += converted

    async def _transcribe(self) -> Event:
        command = self._command
        if command is None:
            raise Refused("malformed", "audio-stop before audio-start")
        self._command = None
        # The transcribe's language serves one command (Home Assistant sends one each).
        self._language = None
        if self._recognizer is None:
            raise Refused("unavailable", "the configured recognizer does not take "
                          "voice commands")
        started = time.perf_counter()
        try:
            answer = await self._recognizer.recognize_samples(bytes(command.pcm),
                                                             language=command.language)
        except TranscriberError as exc:
            raise Refused("failed", "the voice command could not be recognized") from exc
        text = " ".join(u.text for u in answer.utterances if u.text)
        self.transcribed = (bytes(command.pcm), command.language)
        seconds = time.perf_counter() - started
        WYOMING_SECONDS.observe(seconds)
        WYOMING_REQUESTS.labels("transcribed").inc()
        log.info("wyoming_transcribed", audio_ms=len(command.pcm) * 1000 // (RATE * WIDTH),
                 language=answer.language, seconds=round(seconds, 3))
        return Transcript(text=text, language=answer.language or command.language).event()
