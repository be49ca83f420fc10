"""The benchmarks and the container build stay out of a run whose `-m` does not name them;
an expression that names them decides for itself."""

from __future__ import annotations

import pytest

from tests.helpers.markers import left_out


@pytest.mark.parametrize(("markexpr", "markers", "out"), [
    ("not bench and not container", ["bench"], False),
    ("not slow", ["bench"], True),
    ("not slow", ["container", "timeout"], True),
    ("slow", ["slow"], False),
    ("not slow", [], False),
    ("", ["bench"], True),
    ("bench", ["bench"], False),
    ("container", ["container", "timeout"], False),
    ("bench or slow", ["bench", "slow"], False),
    ("benchmark", ["bench"], True),
])
def test_a_benchmark_or_the_container_runs_only_when_named(
        markexpr: str, markers: list[str], out: bool) -> None:
    assert left_out(markexpr, markers) is out
