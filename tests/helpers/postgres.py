"""A real PostgreSQL for the tests: Debian's `postgresql` package, a cluster
initialised into a temporary folder, listening on loopback only.

PostgreSQL refuses to run as root, so under root the cluster belongs to an
unprivileged user (`postgres`, else `nobody`) and its programs run as that
user; otherwise they run as the caller. One server per test session; each
test that needs a database gets a fresh one (`create_database`), or a migrated
one (`take_migrated`): the last test's, wiped and checked against the template
(`tests/helpers/postgres_reuse.py`), else a copy of the template.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from tests.helpers.postgres_reuse import Reuse
from tests.helpers.processes import free_port
from transcriber.db.postgres.migrate import migrate_postgres

SUPERUSER = "transcriber_test"


def bin_dir() -> Path | None:
    """The newest installed PostgreSQL's programs (Debian keeps them per version)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    return Path(found[-1]).parent if found else None


def _unprivileged() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("no unprivileged user to run PostgreSQL as")


def _as_user(user: pwd.struct_passwd | None) -> Callable[[], None] | None:
    if user is None:
        return None

    def demote() -> None:
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)

    return demote


@dataclass
class PostgresServer:
    root: Path
    port: int
    programs: Path
    user: pwd.struct_passwd | None
    template: str | None = None
    reuse: Reuse | None = field(default=None, repr=False)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.programs / args[0]), *args[1:]], check=True, capture_output=True,
            text=True, preexec_fn=_as_user(self.user),
            env={**os.environ, "LC_ALL": "C.UTF-8", "PGHOST": "127.0.0.1",
                 "PGPORT": str(self.port), "PGUSER": SUPERUSER}, cwd="/")

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                  "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        # Loopback only, no Unix socket in a system folder; fsync off: a test
        # cluster is thrown away (durability is SQLite's and the engine's, not ours).
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                   f"-c unix_socket_directories={self.root} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off "
                   "-c max_connections=200 -c shared_buffers=64MB")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l",
                  str(self.root / "server.log"), "-w", "-t", "60", "start")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def create_database(self, prefix: str = "t", *, migrated: bool = False) -> str:
        """A fresh database, empty or (`migrated`) a copy of one the migrations built
        once per run; its URL. A copy costs a file copy, not the schema's statements."""
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        self._run("createdb", "-T", self._migrated_template() if migrated else "template0",
                  name)
        return self.url(name)

    def _migrated_template(self) -> str:
        if self.template is None:
            name = "migrated_template"
            self._run("createdb", "-T", "template0", name)
            with concurrent.futures.ThreadPoolExecutor(1) as thread:
                thread.submit(asyncio.run, migrate_postgres(self.url(name))).result()
            self.template = name
        return self.template

    def take_migrated(self) -> str:
        """A migrated database of this test's own: the spare one the last test gave
        back (wiped and checked), else a copy of the template."""
        if self.reuse is None:
            self.reuse = Reuse(admin_url=self.url(), url_of=self.url,
                               template=self._migrated_template())
        name = self.reuse.take()
        return self.create_database(migrated=True) if name is None else self.url(name)

    def give_back_migrated(self, url: str) -> None:
        """The end of a test's database from `take_migrated`: wiped and kept as the
        spare, renamed (its URL no longer connects), or dropped."""
        assert self.reuse is not None
        try:
            kept = self.reuse.give_back(url.rsplit("/", 1)[1])
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
            kept = False  # the test dropped or broke it: a copy is made next time
        if not kept:
            self.drop_database(url)

    def drop_database(self, url: str) -> None:
        self._run("dropdb", "--if-exists", "--force", url.rsplit("/", 1)[1])


def start_postgres() -> PostgresServer | None:
    """A started server, or None when PostgreSQL is not installed."""
    programs = bin_dir()
    if programs is None:
        return None
    user = _unprivileged()
    root = Path(tempfile.mkdtemp(prefix="transcriber-pg-"))
    if user is not None:
        shutil.chown(root, user.pw_uid, user.pw_gid)
    server = PostgresServer(root=root, port=free_port(), programs=programs, user=user)
    server.start()
    return server


def remove(server: PostgresServer) -> None:
    try:
        if server.reuse is not None:
            server.reuse.close()
        server.stop()
    finally:
        shutil.rmtree(server.root, ignore_errors=True)
