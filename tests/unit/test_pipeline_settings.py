"""Pipeline settings added by the engine: per-stage leases; fake steps are test-only."""

from __future__ import annotations

import pytest

from transcriber.core.errors import ConfigError
from transcriber.settings import load_settings
from transcriber.testing.steps import FakeStep, fake_steps_from_spec


def _load(**env: str) -> object:
    return load_settings(environ={f"TRANSCRIBER_PIPELINE_{k.upper()}": v for k, v in env.items()})


def test_stage_lease_overrides_are_read_from_json() -> None:
    settings = load_settings(environ={
        "TRANSCRIBER_PIPELINE_STAGE_LEASE_SECONDS": '{"submitted": "30"}'})
    assert dict(settings.pipeline.stage_lease_seconds) == {"submitted": "30"}


@pytest.mark.parametrize("value", ['{"done": "30"}', '{"nowhere": "30"}', '{"uploaded": "2"}',
                                   '{"uploaded": "soon"}'])
def test_bad_stage_leases_are_refused(value: str) -> None:
    with pytest.raises(ConfigError, match=r"pipeline\.stage_lease_seconds"):
        _load(stage_lease_seconds=value)


def test_fake_steps_are_no_setting() -> None:
    """Fakes come in through the test entry point, never through a production setting."""
    with pytest.raises(ConfigError, match=r"TRANSCRIBER_PIPELINE_FAKE_STEPS: unknown"):
        _load(fake_steps="normalize=1")


def test_fake_step_spec_builds_a_complete_table() -> None:
    table = fake_steps_from_spec("normalize=2.5, poll=0")
    assert sorted(table) == ["finish", "normalize", "poll", "submit"]
    normalize = table["normalize"]
    assert isinstance(normalize, FakeStep)
    assert normalize.default.seconds == 2.5
