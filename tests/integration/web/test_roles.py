"""What each role installs in one process: the parts on the app, the duties held, the
routes answered (the real app on a fake clock, the duty locks faked)."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from tests.helpers.followups import has_worker, outbox_of
from tests.helpers.settings import SettingsFactory
from transcriber.followups.registry import DESCRIBE, WEBHOOKS
from transcriber.ports import Duty
from transcriber.service.app import build_app
from transcriber.service.pipeline import ENGINE
from transcriber.service.roles import Role
from transcriber.testing.clock import FakeClock
from transcriber.testing.duties import FakeDutyKeeper
from transcriber.testing.steps import fake_steps


async def test_a_worker_runs_steps_and_the_describer_and_answers_only_ops(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
        clock: FakeClock) -> None:
    keeper = FakeDutyKeeper()
    app = build_app(make_settings(pipeline={"workers": 2}), role=Role.WORKER, clock=clock,
                    steps=fake_steps(), duty_locks=keeper.locks())
    client = await aiohttp_client(app)
    assert len(app[ENGINE].actors) == 2
    assert has_worker(app, DESCRIBE)
    assert set(keeper.asks) == {Duty.DESCRIBER}
    assert keeper.holders[Duty.DESCRIBER] is not None
    assert not outbox_of(app).active  # its replies are the outbox duty's holder's to send
    assert not has_worker(app, WEBHOOKS)
    assert (await client.get("/healthz")).status == 200
    assert (await client.get("/readyz")).status == 200
    for path in ("/app/me", "/app/audiorecords", "/", "/v1/models"):
        response = await client.get(path)
        assert response.status == 404, path
        assert (await response.json())["error"]["code"] == "not_found"


async def test_web_runs_no_step_and_holds_the_outbox_and_the_sweeps(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
        clock: FakeClock) -> None:
    keeper = FakeDutyKeeper()
    app = build_app(make_settings(pipeline={"workers": 2}), role=Role.WEB, clock=clock,
                    steps=fake_steps(), duty_locks=keeper.locks())
    client = await aiohttp_client(app)
    assert ENGINE not in app
    assert not has_worker(app, DESCRIBE)
    # No bot token: nobody to poll for, so that lock is never asked for.
    assert set(keeper.asks) == {Duty.OUTBOX, Duty.SWEEPS}
    assert outbox_of(app).active
    assert has_worker(app, WEBHOOKS)
    assert (await client.get("/app/me")).status == 200


async def test_a_second_all_process_waits_for_every_duty(
        aiohttp_client: AiohttpClient, make_settings: SettingsFactory,
        clock: FakeClock) -> None:
    keeper = FakeDutyKeeper()
    settings = make_settings(pipeline={"workers": 1})
    first = build_app(settings, clock=clock, steps=fake_steps(), duty_locks=keeper.locks())
    second = build_app(settings, clock=clock, steps=fake_steps(), duty_locks=keeper.locks())
    await aiohttp_client(first)
    await aiohttp_client(second)
    assert set(keeper.holders) == {Duty.OUTBOX, Duty.SWEEPS, Duty.DESCRIBER}
    assert outbox_of(first).active
    assert not outbox_of(second).active
    assert len(second[ENGINE].actors) == 1  # the steps run in both
