"""A Wyoming server on a free loopback port, and voice commands sent to it the way Home
Assistant sends them (the protocol's own `AsyncTcpClient`), timed from `audio-stop`."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from transcriber.ports import Recognizer
from transcriber.settings import WyomingSettings
from transcriber.voice.server import WyomingServer

# Home Assistant's chunks: 1024 samples of 16-bit mono at 16 kHz.
CHUNK_SAMPLES = 1024


@contextlib.asynccontextmanager
async def serving(recognizer: Recognizer, **values: Any) -> AsyncIterator[int]:
    """`async with serving(recognizer) as port`: the door on a free port until the end."""
    settings = dataclasses.replace(WyomingSettings(enabled=True, port=0), **values)
    server = WyomingServer(settings, recognizer=recognizer, version="test")
    stopping = asyncio.Event()
    task = asyncio.create_task(server.run(stopping), name="wyoming-server-test")
    try:
        yield await server.bound
    finally:
        stopping.set()
        await task


def pcm16(samples: np.ndarray) -> bytes:
    """float samples in [-1, 1] as 16-bit little-endian PCM."""
    converted: bytes = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
    return converted


async def voice_command(port: int, samples: np.ndarray, *,
                        language: str | None) -> tuple[Event | None, float]:
    """One 16 kHz command in Home Assistant's chunks; the answer and the seconds from
    the `audio-stop` sent to the answer read."""
    audio = pcm16(samples)
    client = AsyncTcpClient("127.0.0.1", port)
    await client.connect()
    try:
        await client.write_event(Transcribe(language=language).event())
        await client.write_event(AudioStart(rate=16_000, width=2, channels=1).event())
        step = CHUNK_SAMPLES * 2
        for at in range(0, len(audio), step):
            await client.write_event(AudioChunk(rate=16_000, width=2, channels=1,
                                                audio=audio[at:at + step]).event())
        await client.write_event(AudioStop().event())
        stopped = time.perf_counter()
        answer = await client.read_event()
        return answer, time.perf_counter() - stopped
    finally:
        await client.disconnect()
