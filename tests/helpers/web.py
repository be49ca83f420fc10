"""Moving records through the pipeline with the engine's own writer commands."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from aiohttp.web_runner import BaseRunner

from tests.helpers.followups import followups_of
from transcriber.db.commands.pipeline import Advance, Claim, Claimed, Halt
from transcriber.domain.quality import Quality
from transcriber.domain.stages import (
    HaltReason,
    Stage,
    claimable_stages,
    spec_of,
)
from transcriber.domain.transcripts import dump_structure, plain_text
from transcriber.followups.parts import Moment
from transcriber.pipeline.effects import SaveTranscript, SetColumns
from transcriber.pipeline.step import Effect
from transcriber.ports import Utterance
from transcriber.settings import ServerSettings
from transcriber.web import keys
from transcriber.web.connections import connection_options

Client = TestClient[web.Request, web.Application]
StartApi = Callable[..., Awaitable[Client]]


class ServeLikeServer(TestServer):
    """aiohttp's test server with the connection options of `transcriber serve`
    (`TestServer` would cancel a handler whose client hangs up, which serve does not)."""

    def __init__(self, app: web.Application, settings: ServerSettings) -> None:
        super().__init__(app)
        self._options = connection_options(settings)

    async def _make_runner(self, **kwargs: Any) -> BaseRunner:
        return await super()._make_runner(**{**kwargs, **self._options})
LEASES = dict.fromkeys(claimable_stages(), 60.0)
SPEECH = (
    Utterance(start_ms=0, end_ms=1830, channel=0, text="Hello there, archive."),
    Utterance(start_ms=1900, end_ms=4200, channel=1, text="The quarterly budget meeting"),
    Utterance(start_ms=4200, end_ms=6000, channel=0, text="--> tricky arrow\n\nand a gap"),
)


async def claim(client: Client, record_id: str) -> Claimed:
    claimed = await client.app[keys.WRITER].ask(Claim(leases=LEASES))
    assert isinstance(claimed, Claimed), "nothing claimable"
    assert claimed.record_id == record_id, "another record was claimable first"
    return claimed


async def advance(client: Client, record_id: str, *effects: Effect) -> None:
    """One step on; the advance to `done` writes the follow-ups' rows, as the step actor
    does (their workers are not told: a test wakes the one it watches)."""
    claimed = await claim(client, record_id)
    spec = spec_of(claimed.stage)
    step = spec.step
    assert step is not None
    done = Moment(record_id=record_id, occasion="done") \
        if spec.next_stage is Stage.DONE else None
    if done is not None:
        effects = (*effects, *followups_of(client.app).effects(done))
    await client.app[keys.WRITER].ask(Advance(
        record_id=record_id, token=claimed.token, step=step, effects=effects, duration_ms=7,
    ))


async def transcribe(
    client: Client, record_id: str, utterances: Sequence[Utterance] = SPEECH, *,
    quality: Quality | None = None,
) -> None:
    """uploaded → normalized → submitted → transcribed, saving the transcript (and its
    quality report, when given, as the poll step does)."""
    await advance(client, record_id)
    await advance(client, record_id)
    report = () if quality is None else (SetColumns(values={"quality": quality.to_json()}),)
    await advance(client, record_id, SaveTranscript(
        text=plain_text(utterances), structure_json=dump_structure(utterances)), *report)


async def halt(client: Client, record_id: str, error_text: str = "not audio") -> None:
    """The record halts, writing the follow-ups' rows as the step actor does."""
    claimed = await claim(client, record_id)
    halted = Moment(record_id=record_id, occasion="halted", halt_reason=HaltReason.STEP_FAILED)
    await client.app[keys.WRITER].ask(Halt(
        record_id=record_id, token=claimed.token, reason=HaltReason.STEP_FAILED,
        error_text=error_text, effects=followups_of(client.app).effects(halted)))



async def upload(
    client: Client,
    content: bytes = b"RIFF....WAVEfmt fake audio bytes",
    name: str = "talk.wav",
    headers: dict[str, str] | None = None,
) -> dict[str, object]:
    """Upload raw bytes; returns the 201 body."""
    response = await client.post(
        "/app/audiorecords", data=content,
        headers={"X-Filename": name, "Content-Type": "application/octet-stream",
                 **(headers or {})},
    )
    assert response.status == 201, await response.text()
    body = await response.json()
    assert isinstance(body, dict)
    return body


def stored_files(data_dir: Path) -> list[Path]:
    """Everything under the records folder, temporary files included."""
    root = data_dir / "records"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []
