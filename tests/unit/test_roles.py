"""`transcriber serve --role`: what each role runs, and which duty lock a process uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.settings import settings_on
from transcriber.cli.parser import ROLES, build_parser
from transcriber.db.duties import FileDutyLocks, duty_key
from transcriber.db.postgres.duties import PostgresDutyLocks
from transcriber.ports import Duty
from transcriber.service.duties import make_duty_locks
from transcriber.service.roles import Role, RolePlan, plan_of
from transcriber.settings import Secret
from transcriber.testing.clock import FakeClock


def test_all_runs_everything_and_asks_for_every_duty() -> None:
    assert plan_of(Role.ALL) == RolePlan(doors=True, step_actors=True,
                                         duties=frozenset(Duty))


def test_web_runs_the_doors_and_their_duties_but_no_step() -> None:
    assert plan_of(Role.WEB) == RolePlan(
        doors=True, step_actors=False,
        duties=frozenset({Duty.TELEGRAM_POLLING, Duty.OUTBOX, Duty.SWEEPS, Duty.WATCH}))


def test_a_worker_runs_the_steps_and_the_describer_behind_no_door() -> None:
    assert plan_of(Role.WORKER) == RolePlan(doors=False, step_actors=True,
                                            duties=frozenset({Duty.DESCRIBER}))


@pytest.mark.parametrize("role", list(Role))
def test_a_one_shot_run_takes_no_duty(role: Role) -> None:
    assert plan_of(role, one_shot=True) == RolePlan(doors=False, step_actors=True,
                                                    duties=frozenset())


def test_every_duty_is_someones_and_web_and_worker_together_hold_what_all_holds() -> None:
    web, worker = plan_of(Role.WEB), plan_of(Role.WORKER)
    assert web.duties | worker.duties == plan_of(Role.ALL).duties == frozenset(Duty)
    assert not web.duties & worker.duties


def test_the_parser_offers_the_roles_with_all_by_default() -> None:
    assert set(ROLES) == {role.value for role in Role}
    parser = build_parser()
    assert parser.parse_args(["serve"]).role == "all"
    assert parser.parse_args(["serve", "--role", "worker"]).role == "worker"
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--role", "cook"])


def test_each_duty_has_its_own_bigint_key() -> None:
    keys = {duty: duty_key(duty) for duty in Duty}
    assert len(set(keys.values())) == len(Duty)
    assert all(-(2**63) <= key < 2**63 for key in keys.values())
    assert duty_key(Duty.OUTBOX) == duty_key(Duty("outbox"))  # stable: every process agrees


def test_the_lock_lives_in_postgresql_when_a_database_url_is_set(tmp_path: Path) -> None:
    clock = FakeClock()
    alone = settings_on(tmp_path)
    assert isinstance(make_duty_locks(alone, clock=clock), FileDutyLocks)
    shared = settings_on(tmp_path, storage={
        "database_url": Secret("postgresql://u@db.example/transcriber")})
    assert isinstance(make_duty_locks(shared, clock=clock), PostgresDutyLocks)
    empty = settings_on(tmp_path, storage={"database_url": Secret("")})
    assert isinstance(make_duty_locks(empty, clock=clock), FileDutyLocks)


def test_serve_says_in_one_human_line_where_the_app_is_and_how_to_stop_it() -> None:
    from transcriber.cli.serve import where_line  # noqa: PLC0415

    assert where_line("127.0.0.1", 8080, Role.ALL) == (
        "transcriber: the web app is at http://127.0.0.1:8080/ (Ctrl-C or SIGTERM stops it)")
    assert "http://127.0.0.1:9000/" in where_line("0.0.0.0", 9000, Role.WEB)
    assert "http://[::1]:9000/" in where_line("::", 9000, Role.WEB)
    assert "http://[fd00::5]:80/" in where_line("fd00::5", 80, Role.WEB)
    assert "http://example.org:80/" in where_line("example.org", 80, Role.WEB)
    assert where_line("127.0.0.1", 8081, Role.WORKER).startswith(
        "transcriber: a worker: only http://127.0.0.1:8081/healthz")
