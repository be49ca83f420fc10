"""Fixtures of the real steps: records with real files, the local recognizer on its
defaults (loaded once per run), and SpeechKit's path (a real S3 server, moto on
loopback, and the fake SpeechKit v3 server)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import boto3  # type: ignore[import-untyped]
import pytest

from tests.helpers import steps
from tests.helpers.s3 import Bucket
from tests.helpers.settings import SettingsFactory
from tests.helpers.steps import AddRecord
from tests.helpers.whisper import MakeWhisper, batched_and_sequential
from transcriber.db.writer import Writer
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.quota import CallBudget
from transcriber.providers.speechkit import SpeechkitRecognizer
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings, Secret, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_speechkit import FakeSpeechkit


@pytest.fixture
def add_record(writer: Writer, record_files: LocalRecordFiles) -> AddRecord:
    """Place a copy of `source` as a record's original and accept the record."""

    async def add(source: Path) -> str:
        return await steps.add_record(writer, record_files, source)

    return add


@pytest.fixture(scope="session")
def whisper(make_whisper: MakeWhisper) -> Iterator[WhisperRecognizer]:
    """The local recognizer on its default settings (a module may ask for others)."""
    recognizer = make_whisper(RecognizerSettings())
    yield recognizer
    asyncio.run(recognizer.close())


@pytest.fixture(scope="module")
def recognizers(make_whisper: MakeWhisper) -> Iterator[dict[bool, WhisperRecognizer]]:
    """The default (batched) recognizer and the sequential one, by `batched`: one pair per
    module of the hard corpora (`hard_checks`), so a module carries its own load."""
    yield from batched_and_sequential(make_whisper)


@pytest.fixture
def bucket(s3_bucket: Bucket) -> str:
    return s3_bucket.name


@pytest.fixture
async def speechkit(s3_endpoint: str) -> AsyncIterator[FakeSpeechkit]:
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")

    async def read_object(uri: str) -> bytes | None:
        bucket, _, key = uri.removeprefix(f"{s3_endpoint}/").partition("/")
        try:
            answer = await asyncio.to_thread(client.get_object, Bucket=bucket, Key=key,
                                             Range="bytes=0-4095")
            return await asyncio.to_thread(answer["Body"].read)
        except client.exceptions.NoSuchKey:
            return None

    fake = FakeSpeechkit(pending_polls=2, read_object=read_object)
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def sk_settings(make_settings: SettingsFactory, s3_endpoint: str, bucket: str,
                speechkit: FakeSpeechkit) -> Settings:
    settings: Settings = make_settings(
        recognizer={"provider": "speechkit"},
        speechkit={"api_key": Secret(speechkit.api_key), "stt_url": speechkit.base_url,
                   "operation_url": speechkit.base_url},
        s3={"endpoint_url": s3_endpoint, "bucket": bucket, "region": "us-east-1",
            "access_key_id": Secret("test"), "secret_access_key": Secret("test")},
        pipeline={"backoff_base_seconds": 1.0, "backoff_cap_seconds": 1.0},
    )
    return settings


@pytest.fixture
async def store(sk_settings: Settings) -> AsyncIterator[S3ObjectStore]:
    s3 = S3ObjectStore(sk_settings.s3)
    await s3.start()
    yield s3
    await s3.close()


@pytest.fixture
async def recognizer(sk_settings: Settings, clock: FakeClock
                     ) -> AsyncIterator[SpeechkitRecognizer]:
    speechkit = SpeechkitRecognizer(sk_settings.speechkit, budget=CallBudget(
        limit=sk_settings.speechkit.status_checks_per_hour, window_seconds=3600, clock=clock))
    yield speechkit
    await speechkit.close()
