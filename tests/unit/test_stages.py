"""P8: every consumer of the stage list derives from the one descriptor.

A new stage added to `stages.STAGES` must show up in the claim query, the
lease table, the stuck limits, the step table and the schema's CHECK list;
these tests fail if any one of them is forgotten.
"""

from __future__ import annotations

import re

import pytest

from transcriber.db import queries as q
from transcriber.db.migrate import default_migrations_dir
from transcriber.domain.stages import (
    FIRST_STAGE,
    STAGES,
    HaltReason,
    Stage,
    claimable_stages,
    step_names,
)
from transcriber.pipeline import policy
from transcriber.pipeline.engine import MissingSteps, check_step_table
from transcriber.settings import PipelineSettings
from transcriber.testing.steps import fake_steps

SCHEMA = (default_migrations_dir() / "0001_init.sql").read_text()


def _check_list(column: str, sql: str) -> set[str]:
    match = re.search(rf"{column}\s+TEXT[^,]*?CHECK \({column} IN \(([^)]*)\)\)", sql, re.S)
    assert match is not None, f"no CHECK list for {column}"
    return {item.strip().strip("'") for item in match.group(1).split(",")}


def test_p08_schema_check_list_names_every_stage() -> None:
    assert _check_list("state", SCHEMA) == {stage.value for stage in Stage}
    assert {spec.stage for spec in STAGES} == set(Stage)


def test_p09_schema_check_list_names_every_halt_reason() -> None:
    assert _check_list("halt_reason", SCHEMA) == {reason.value for reason in HaltReason}


def test_p08_claimable_set_is_every_stage_with_a_step_and_never_done() -> None:
    assert set(claimable_stages()) == {spec.stage for spec in STAGES if spec.step is not None}
    assert Stage.DONE not in claimable_stages()


def test_p08_claim_query_lists_the_claimable_set_and_a_lease_per_stage() -> None:
    match = re.search(r"state IN \(([^)]*)\)", q.pipeline.CLAIM)
    assert match is not None
    listed = {item.strip().strip("'") for item in match.group(1).split(",")}
    assert listed == {stage.value for stage in claimable_stages()}
    for stage in claimable_stages():
        assert f"WHEN '{stage.value}' THEN :{q.pipeline.lease_param(stage.value)}" in \
            q.pipeline.CLAIM
    assert "'done'" not in q.pipeline.CLAIM


def test_p08_lease_table_and_stuck_limits_cover_every_claimable_stage() -> None:
    settings = PipelineSettings()
    assert set(policy.lease_table(settings)) == set(claimable_stages())
    for stage in claimable_stages():
        assert policy.stuck_limit_seconds(stage, settings) is not None
        assert policy.next_step(stage) in step_names()
    assert policy.stuck_limit_seconds(Stage.DONE, settings) is None


def test_p08_step_table_must_name_every_step() -> None:
    check_step_table(fake_steps())
    incomplete = fake_steps(names=[name for name in step_names() if name != "poll"])
    with pytest.raises(MissingSteps, match="poll"):
        check_step_table(incomplete)


def test_p08_stages_form_one_chain_from_the_first_to_done() -> None:
    seen = [FIRST_STAGE]
    spec = STAGES[0]
    while spec.next_stage is not None:
        seen.append(spec.next_stage)
        spec = next(s for s in STAGES if s.stage == spec.next_stage)
    assert seen == [spec.stage for spec in STAGES]
    assert seen[-1] is Stage.DONE
    assert len(set(step_names())) == len(step_names())


def test_p08_stage_names_say_what_is_achieved() -> None:
    # Scenario "A stage names what is done": after normalization the stage is
    # `normalized`, never the work to come (`converted`, `transcribe`, …).
    assert [s.value for s in Stage] == ["uploaded", "normalized", "submitted", "transcribed",
                                        "done"]


def test_migrations_folder_exists() -> None:
    assert default_migrations_dir().joinpath("0002_pipeline_lease_takeover.sql").is_file()
