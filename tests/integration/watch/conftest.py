"""The watched folder's tests run on both engines (its remembered hashes are rows)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)
