"""Shared fixtures: settings on a temporary data folder, a fake clock, started storage,
the bundled Whisper model prepared once per run."""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.helpers import postgres
from tests.helpers.database import TestDatabase
from tests.helpers.markers import left_out
from tests.helpers.s3 import Bucket, start_moto
from tests.helpers.settings import SettingsFactory, settings_on
from tests.helpers.whisper import MakeWhisper
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.postgres.readers import PgReaderPool
from transcriber.db.postgres.writer import PgWriter
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.providers.recognizers import BUNDLED_MODEL_NAME
from transcriber.providers.whisper_bundle import prepare_bundled_model
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A `-m` given on the command line replaces the configured one (`not bench and not
    container`); the benchmarks and the container build stay out unless it names them."""
    markexpr = str(config.getoption("markexpr") or "")
    dropped = [item for item in items
               if left_out(markexpr, (mark.name for mark in item.iter_markers()))]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def make_settings(data_dir: Path) -> SettingsFactory:
    """Settings with the data folder in tmp; keyword args replace whole sections' fields.

    Example: make_settings(pipeline={"workers": 0}).
    """
    return functools.partial(settings_on, data_dir)


@pytest.fixture
def settings(make_settings: SettingsFactory) -> Settings:
    return make_settings()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SQLite database the migrations built once per run (per xdist worker), on a
    fresh fake clock's time: `migrated` copies it instead of migrating again."""
    folder = tmp_path_factory.mktemp("sqlite-template")
    migrate(folder, clock=FakeClock())
    return database_path(folder)


@pytest.fixture
def migrated(data_dir: Path, clock: FakeClock, sqlite_template: Path) -> Path:
    """This test's SQLite database with the schema: a copy of the run's template (a file
    copy, not the migrations' statements; the migrations' own tests migrate for real)
    when the test's clock still reads the template's time, else migrated here."""
    path = database_path(data_dir)
    if clock.now() == FakeClock().now() and not path.exists():
        shutil.copyfile(sqlite_template, path)
    else:
        migrate(data_dir, clock=clock)
    return path


@pytest.fixture
def engine() -> str:
    """The storage engine of `writer` and `readers`; a folder's conftest may
    parametrize it over "sqlite" and "postgresql" (the P-tests do)."""
    return "sqlite"


@pytest.fixture
def database_url(engine: str, request: pytest.FixtureRequest) -> str | None:
    """This test's PostgreSQL database, migrated (a copy of the run's template), or
    None on SQLite."""
    if engine == "postgresql":
        url: str = request.getfixturevalue("pg_migrated")
        return url
    return None


@pytest.fixture
def database(data_dir: Path, database_url: str | None) -> TestDatabase:
    """Plain SQL on this test's engine, from synchronous test code."""
    return TestDatabase(data_dir, database_url)


@pytest.fixture
def pg_migrated(postgres_server: postgres.PostgresServer) -> Iterator[str]:
    """A PostgreSQL database of this test's own with the schema and no rows: the
    last test's, wiped, checked against the run's migrated template and renamed, or
    a copy of that template (`tests/helpers/postgres_reuse.py`). Its URL; afterwards
    it is wiped for the next test or dropped."""
    url = postgres_server.take_migrated()
    yield url
    postgres_server.give_back_migrated(url)


@pytest.fixture
async def writer(
    engine: str, request: pytest.FixtureRequest, clock: FakeClock
) -> AsyncIterator[Writer]:
    actor: Writer
    if engine == "postgresql":
        actor = PgWriter(request.getfixturevalue("pg_migrated"), clock=clock)
    else:
        actor = Writer(request.getfixturevalue("migrated"), clock=clock)
    await actor.start()
    yield actor
    await actor.stop()


@pytest.fixture
async def readers(engine: str, request: pytest.FixtureRequest) -> AsyncIterator[ReaderPool]:
    pool: ReaderPool
    if engine == "postgresql":
        pool = PgReaderPool(request.getfixturevalue("pg_migrated"), size=2)
    else:
        pool = ReaderPool(request.getfixturevalue("migrated"), size=2)
    await pool.open()
    yield pool
    await pool.close()


@pytest.fixture
def record_files(data_dir: Path) -> LocalRecordFiles:
    return LocalRecordFiles(data_dir)


@pytest.fixture(scope="session")
def whisper_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled Whisper model, joined and checked against its SHA-256 once per run."""
    return prepare_bundled_model(tmp_path_factory.mktemp("models") / BUNDLED_MODEL_NAME)


@pytest.fixture(scope="session")
def make_whisper(whisper_model: Path) -> MakeWhisper:
    """Real local recognizers with given settings, all on `whisper_model`."""
    return MakeWhisper(whisper_model)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[postgres.PostgresServer]:
    """One PostgreSQL per run (Debian's package, a temporary cluster on loopback).
    Missing here: its tests skip; under CI (`.ci/dev test` installs it) they fail."""
    server = postgres.start_postgres()
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL (Debian's postgresql) is missing under CI")
        pytest.skip("needs PostgreSQL (Debian's postgresql)")
    yield server
    postgres.remove(server)


@pytest.fixture
def postgres_url(postgres_server: postgres.PostgresServer) -> Iterator[str]:
    """A fresh, empty database of the run's PostgreSQL, dropped afterwards."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3 (moto in server mode) on loopback, one per run."""
    yield from start_moto()


@pytest.fixture
def s3_bucket(s3_endpoint: str) -> Bucket:
    """A fresh bucket on the run's S3."""
    return Bucket(s3_endpoint)
