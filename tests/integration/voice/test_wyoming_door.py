"""The Wyoming door on a real socket with the protocol's own client (`AsyncTcpClient`)
and a fake recognizer: what `describe` says, audio converted to 16 kHz mono 16-bit,
and every refusal (address, size, format, language, malformed events, busy)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
from collections.abc import AsyncIterator, Callable
from typing import Any

import numpy as np
import pytest
import structlog
from prometheus_client import REGISTRY
from pytest_aiohttp import AiohttpClient
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from transcriber.core.errors import TransientFailure
from transcriber.service.app import build_app
from transcriber.service.voice import WYOMING
from transcriber.settings import WyomingSettings
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeVoiceRecognizer
from transcriber.testing.steps import fake_steps
from transcriber.voice.server import MAX_PAYLOAD_BYTES, WyomingServer

Serve = Callable[..., contextlib.AbstractAsyncContextManager[int]]


@pytest.fixture
def voice() -> FakeVoiceRecognizer:
    return FakeVoiceRecognizer()


@pytest.fixture
def serve(voice: FakeVoiceRecognizer) -> Serve:
    """`async with serve(**settings) as port`: a server on a free loopback port."""

    @contextlib.asynccontextmanager
    async def running(**values: Any) -> AsyncIterator[int]:
        settings = dataclasses.replace(WyomingSettings(enabled=True, port=0), **values)
        server = WyomingServer(settings, recognizer=voice, version="test")
        stopping = asyncio.Event()
        task = asyncio.create_task(server.run(stopping), name="wyoming-server-test")
        try:
            yield await server.bound
        finally:
            stopping.set()
            await task

    return running


def tone(seconds: float, *, rate: int, width: int, channels: int) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    wave = 0.3 * np.sin(2 * np.pi * 440 * t)
    kinds = {2: "<i2", 4: "<i4"}
    samples = (wave * (2 ** (8 * width - 1) - 1)).astype(kinds[width])
    return np.repeat(samples[:, None], channels, axis=1).tobytes()


async def command(port: int, audio: bytes, *, rate: int = 16_000, width: int = 2,
                  channels: int = 1, language: str | None = "en",
                  chunk_bytes: int = 4096) -> Event | None:
    """One voice command as Home Assistant sends it; the event it is answered."""
    client = AsyncTcpClient("127.0.0.1", port)
    await client.connect()
    try:
        await client.write_event(Transcribe(language=language).event())
        await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
        for at in range(0, len(audio), chunk_bytes):
            await client.write_event(AudioChunk(rate=rate, width=width, channels=channels,
                                                audio=audio[at:at + chunk_bytes]).event())
        await client.write_event(AudioStop().event())
        return await client.read_event()
    except ConnectionError:
        # The server may close while the client still writes (a refusal mid-stream):
        # its error event is already in the socket's buffer only if it was read first.
        return None
    finally:
        await client.disconnect()


async def raw(port: int, data: bytes) -> Event | None:
    client = AsyncTcpClient("127.0.0.1", port)
    await client.connect()
    try:
        assert client._writer is not None
        client._writer.write(data)
        await client._writer.drain()
        return await client.read_event()
    finally:
        await client.disconnect()


def count(outcome: str) -> float:
    return REGISTRY.get_sample_value("transcriber_wyoming_requests_total",
                                     {"outcome": outcome}) or 0.0


async def test_describe_names_the_model_and_its_languages(serve: Serve) -> None:
    async with serve() as port:
        client = AsyncTcpClient("127.0.0.1", port)
        await client.connect()
        await client.write_event(Describe().event())
        event = await client.read_event()
        await client.disconnect()
    assert event is not None
    assert Info.is_type(event.type)
    program, = Info.from_event(event).asr
    model, = program.models
    assert model.name == "fake"
    assert {"en", "ru"} <= set(model.languages)


async def test_a_command_is_answered_its_transcript_from_16_khz_mono_pcm(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    audio = tone(2.0, rate=16_000, width=2, channels=1)
    async with serve() as port:
        event = await command(port, audio, language="ru_RU")
    assert event is not None
    assert Transcript.is_type(event.type)
    assert Transcript.from_event(event).text == "turn on the kitchen light"
    (pcm, language), = voice.commands
    assert pcm == audio
    assert language == "ru"


async def test_the_sessions_event_log_says_what_happened_and_never_the_words(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    with structlog.testing.capture_logs() as logs:
        async with serve() as port:
            await command(port, tone(2.0, rate=16_000, width=2, channels=1), language="en")
            await raw(port, b"not an event\n")
    events = [entry["event"] for entry in logs]
    assert events == ["wyoming_listening", "wyoming_transcribed", "wyoming_refused"]
    transcribed = logs[1]
    assert (transcribed["audio_ms"], transcribed["language"]) == (2000, "en")
    assert logs[2]["code"] == "malformed"
    assert voice.text not in repr(logs)


async def test_other_rates_widths_and_channels_are_converted(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    audio = tone(1.5, rate=48_000, width=4, channels=2)
    async with serve() as port:
        event = await command(port, audio, rate=48_000, width=4, channels=2, language=None)
    assert event is not None
    assert Transcript.is_type(event.type)
    (pcm, language), = voice.commands
    assert language is None
    # 1.5 s at 16 kHz, 16-bit mono, give or take the resampler's edge.
    assert abs(len(pcm) - 48_000) <= 16
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    spectrum = np.abs(np.fft.rfft(samples))
    assert round(float(np.argmax(spectrum)) * 16_000 / samples.size) == 440  # the same tone


async def test_commands_of_several_clients_are_served_side_by_side(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    audio = tone(1.0, rate=16_000, width=2, channels=1)
    async with serve() as port:
        events = await asyncio.gather(*(command(port, audio) for _ in range(5)))
    assert all(e is not None and Transcript.is_type(e.type) for e in events)
    assert len(voice.commands) == 5


async def test_an_address_outside_the_allow_list_is_refused(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    before = count("not_allowed")
    async with serve(allowed=(ipaddress.ip_network("10.0.0.0/8"),)) as port:
        client = AsyncTcpClient("127.0.0.1", port)
        await client.connect()
        event = await client.read_event()
        await client.disconnect()
    assert event is not None
    assert Error.is_type(event.type)
    assert Error.from_event(event).code == "not-allowed"
    assert voice.commands == []
    assert count("not_allowed") == before + 1


async def test_too_much_audio_is_refused_as_it_arrives(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    async with serve(max_audio_seconds=1) as port:
        client = AsyncTcpClient("127.0.0.1", port)
        await client.connect()
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        second = tone(1.0, rate=16_000, width=2, channels=1)
        await client.write_event(AudioChunk(rate=16_000, width=2, channels=1,
                                            audio=second).event())
        await client.write_event(AudioChunk(rate=16_000, width=2, channels=1,
                                            audio=second[:64]).event())
        event = await client.read_event()
        await client.disconnect()
    assert event is not None
    assert Error.is_type(event.type)
    assert Error.from_event(event).code == "too-long"
    assert voice.commands == []


@pytest.mark.parametrize(("data", "code"), [
    (b"this is not json\n", "malformed"),
    (b'{"type": "audio-chunk", "data": {"rate": 16000}}\n', "malformed"),
    (b'{"type": "audio-start", "data": {"rate": 16000, "width": 2}}\n', "malformed"),
    (b'{"type": "audio-stop"}\n', "malformed"),
    (b'{"type": "audio-chunk", "payload_length": %d}\n' % (MAX_PAYLOAD_BYTES + 1),
     "malformed"),
    (b'{"type": "audio-start", "data": {"rate": 16000, "width": 2, "channels": 6}}\n',
     "unsupported-audio"),
    (b'{"type": "transcribe", "data": {"language": "xx"}}\n', "unsupported-language"),
    (b"x" * 70_000 + b"\n", "malformed"),
])
async def test_malformed_events_are_refused_with_an_error(serve: Serve, data: bytes,
                                                          code: str) -> None:
    async with serve() as port:
        event = await raw(port, data)
    assert event is not None
    assert Error.is_type(event.type)
    assert Error.from_event(event).code == code


async def test_a_failed_recognition_is_answered_an_error(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    voice.faults.append(TransientFailure("model missing"))
    async with serve() as port:
        event = await command(port, tone(1.0, rate=16_000, width=2, channels=1))
    assert event is not None
    assert Error.is_type(event.type)
    assert Error.from_event(event).code == "failed"


async def test_an_unexpected_fault_ends_that_client_with_an_error_not_the_server(
        serve: Serve, voice: FakeVoiceRecognizer) -> None:
    voice.faults.append(RuntimeError("a bug"))
    async with serve() as port:
        broken = await command(port, tone(1.0, rate=16_000, width=2, channels=1))
        served = await command(port, tone(1.0, rate=16_000, width=2, channels=1))
    assert broken is not None
    assert Error.from_event(broken).code == "failed"
    assert served is not None
    assert Transcript.is_type(served.type)


async def test_a_silent_client_is_let_go(serve: Serve) -> None:
    async with serve(idle_seconds=0.2) as port:
        client = AsyncTcpClient("127.0.0.1", port)
        await client.connect()
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        # Nothing more is sent: the server closes the connection, answering nothing.
        closed = await client.read_event()
        await client.disconnect()
    assert closed is None


async def test_clients_past_the_cap_are_told_busy(serve: Serve) -> None:
    async with serve(max_clients=1) as port:
        first = AsyncTcpClient("127.0.0.1", port)
        await first.connect()
        await first.write_event(Describe().event())
        assert await first.read_event() is not None  # the first is being served
        second = AsyncTcpClient("127.0.0.1", port)
        await second.connect()
        event = await second.read_event()
        await second.disconnect()
        await first.disconnect()
    assert event is not None
    assert Error.from_event(event).code == "busy"


async def test_the_service_runs_the_door_when_enabled(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock,
        voice: FakeVoiceRecognizer) -> None:
    app = build_app(make_settings(wyoming={"enabled": True, "port": 0}), clock=clock,
                    steps=fake_steps(), recognizer=voice)
    await aiohttp_client(app)
    port = await app[WYOMING].bound
    event = await command(port, tone(1.0, rate=16_000, width=2, channels=1))
    assert event is not None
    assert Transcript.is_type(event.type)


async def command_then_describe(port: int, audio: bytes) -> tuple[Event | None, Event | None]:
    """A command, then `describe` on the same connection: the server archives a command
    before it reads the next event, so the `info` answer means the archiving is over."""
    client = AsyncTcpClient("127.0.0.1", port)
    await client.connect()
    try:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        await client.write_event(AudioChunk(rate=16_000, width=2, channels=1,
                                            audio=audio).event())
        await client.write_event(AudioStop().event())
        transcript = await client.read_event()
        await client.write_event(Describe().event())
        return transcript, await client.read_event()
    finally:
        await client.disconnect()


async def test_with_archive_on_a_command_becomes_a_record_of_the_named_person(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock,
        voice: FakeVoiceRecognizer, database: TestDatabase) -> None:
    settings = make_settings(wyoming={"enabled": True, "port": 0, "archive": True,
                                      "archive_login": "kitchen"})
    app = build_app(settings, clock=clock, steps=fake_steps(), recognizer=voice)
    await aiohttp_client(app)
    transcript, info = await command_then_describe(
        await app[WYOMING].bound, tone(1.0, rate=16_000, width=2, channels=1))
    assert transcript is not None
    assert Transcript.is_type(transcript.type)
    assert info is not None
    assert Info.is_type(info.type)
    assert database.rows(
        "SELECT u.provider_login, r.original_filename, r.language, r.duration_ms "
        "FROM audio_records r JOIN users u ON u.id = r.owner_id") == [
        ("kitchen", "voice-command.wav", "en", 1000)]


async def test_without_archive_nothing_is_stored(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock,
        voice: FakeVoiceRecognizer, database: TestDatabase) -> None:
    app = build_app(make_settings(wyoming={"enabled": True, "port": 0}), clock=clock,
                    steps=fake_steps(), recognizer=voice)
    await aiohttp_client(app)
    transcript, info = await command_then_describe(
        await app[WYOMING].bound, tone(1.0, rate=16_000, width=2, channels=1))
    assert transcript is not None
    assert info is not None
    assert database.rows("SELECT id FROM audio_records") == []


async def test_the_door_is_off_by_default(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory, clock: FakeClock,
        voice: FakeVoiceRecognizer) -> None:
    app = build_app(make_settings(), clock=clock, steps=fake_steps(), recognizer=voice)
    await aiohttp_client(app)
    assert WYOMING not in app
