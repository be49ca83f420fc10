"""One migrated PostgreSQL database per test process, wiped and renamed between tests
instead of copied from the template for each test.

`CREATE DATABASE … TEMPLATE` copies the whole database, system catalogs included
(about 9 MB): 0.2 s on a quiet machine, 0.5-1.5 s under the suite's load, and
about 630 tests take one (each web and pipeline test on PostgreSQL). Wiping the
rows a test left, checking and renaming cost 0.03-0.1 s.

A test still gets a database of its own, as fresh as a copy:

- the clients the last test left are cut off (`pg_terminate_backend`, waited for),
  and the database is renamed: its old URL no longer connects, so a leaked
  client cannot write into the next test;
- every table but `schema_migrations` (the migrations' rows, as the template
  has them) is emptied with `DELETE` (row triggers and foreign-key checks off
  for that transaction: every row goes);
- then the database is compared with the template (`SIGNATURE`): its schema
  (tables, columns, defaults, indexes, constraints, triggers and whether they are
  enabled, functions and their bodies, types, schemas, extensions, the database's
  own settings), the planner's statistics (no table vacuumed or analyzed, no
  `pg_statistic` row for a table of the schema), `schema_migrations`' rows and
  no large object. A test that changed any of these leaves a database that is
  dropped; the next test gets a fresh copy of the template.
- A table left at 10 pages or more (where the planner starts to read its real
  size instead of assuming 10 pages) or an index over `INDEX_PAGES` is dropped
  the same way, so the planner prices the next test's statements as on a copy.
- The database's statistics counters are reset (`pg_stat_reset`).

`Reuse.recycled` and `Reuse.copied` count both ways.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")

# An index of a test's few rows stays this small; a larger one is priced differently
# by the planner than a fresh copy's would be (dead entries it still holds).
INDEX_PAGES = 4
# Below 10 pages a never-vacuumed table is priced as 10 pages whatever its size.
TABLE_PAGES = 10

_USER = ("n.nspname NOT IN ('pg_catalog', 'information_schema') "
         "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'")

SIGNATURE = f"""
SELECT md5(string_agg(line, E'\\n' ORDER BY line)) FROM (
  SELECT format('rel %s %s %s %s %s %s', c.relname, c.relkind, c.relnatts, c.reloptions,
                c.relrowsecurity,
                CASE WHEN c.relkind IN ('r', 'm', 'p') THEN c.relpages || '/' || c.reltuples END)
         AS line
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_USER}
  UNION ALL
  SELECT format('att %s.%s %s %s %s %s', c.relname, a.attname,
                format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attisdropped,
                pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE {_USER} AND a.attnum > 0
  UNION ALL
  SELECT 'index ' || pg_get_indexdef(i.indexrelid)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_USER}
  UNION ALL
  SELECT format('con %s %s %s %s', co.conrelid::regclass, co.conname, co.convalidated,
                pg_get_constraintdef(co.oid))
    FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE {_USER}
  UNION ALL
  SELECT format('trigger %s %s %s %s', t.tgrelid::regclass, t.tgname, t.tgenabled,
                t.tgfoid::regprocedure) FROM pg_trigger t
  UNION ALL
  SELECT format('function %s %s', p.oid::regprocedure, md5(p.prosrc))
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE {_USER}
  UNION ALL
  SELECT format('type %s %s', t.typname, t.typtype)
    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE {_USER}
  UNION ALL
  SELECT 'schema ' || n.nspname FROM pg_namespace n WHERE {_USER}
  UNION ALL
  SELECT format('extension %s %s', extname, extversion) FROM pg_extension
  UNION ALL
  SELECT format('rule %s %s', r.rulename, r.ev_class::regclass) FROM pg_rewrite r
    JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE {_USER}
  UNION ALL
  SELECT format('policy %s %s', polname, polrelid::regclass) FROM pg_policy
  UNION ALL
  SELECT format('setting %s %s', s.setrole, s.setconfig) FROM pg_db_role_setting s
   WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  UNION ALL
  SELECT 'statistics ' || count(*) FROM pg_statistic s JOIN pg_class c ON c.oid = s.starelid
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_USER}
  UNION ALL
  SELECT 'extended statistics ' || count(*) FROM pg_statistic_ext
  UNION ALL
  SELECT 'large objects ' || count(*) FROM pg_largeobject_metadata
  UNION ALL
  SELECT 'migrations ' || coalesce(md5(string_agg(m::text, ',' ORDER BY m.version)), '')
    FROM schema_migrations m
) AS lines
"""

OVERSIZED = f"""
SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE {_USER} AND (
       (c.relkind IN ('r', 'm', 't') AND pg_relation_size(c.oid) >= {TABLE_PAGES} * 8192)
    OR (c.relkind = 'i' AND pg_relation_size(c.oid) > {INDEX_PAGES} * 8192))
"""

TABLES = f"""
SELECT format('%I.%I', n.nspname, c.relname) AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE {_USER} AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations'
"""

TERMINATE = """
SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
 WHERE datname = $1 AND pid <> pg_backend_pid()
"""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Reuse:
    """The recycler of one server's migrated databases (one per test process)."""

    admin_url: str
    url_of: Callable[[str], str]  # a database's URL on this server
    template: str
    spare: str | None = None
    recycled: int = 0
    copied: int = 0
    _signature: str | None = None
    _wipe: str | None = None
    _loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _thread: threading.Thread | None = None
    _admin: asyncpg.Connection | None = None

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """A coroutine on the recycler's own loop (its thread), from synchronous code."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop.run_forever,
                                            name="pg-reuse", daemon=True)
            self._thread.start()
        done: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return done.result()

    def take(self) -> str | None:
        """The spare database's name (now this test's), or None: copy the template."""
        name, self.spare = self.spare, None
        if name is not None:
            self.recycled += 1
        else:
            self.copied += 1
        return name

    def give_back(self, name: str) -> bool:
        """Wipe a test's database and keep it, renamed, as the spare; False when it
        differs from the template after the wipe (then the caller drops it)."""
        kept = self._run(self._recycle(name))
        return kept is not None

    def close(self) -> None:
        if self._thread is None:
            return
        self._run(self._close_admin())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def _close_admin(self) -> None:
        if self._admin is not None:
            await self._admin.close()
            self._admin = None

    async def _admin_connection(self) -> asyncpg.Connection:
        if self._admin is None or self._admin.is_closed():
            self._admin = await asyncpg.connect(self.admin_url)
        return self._admin

    async def _learn_template(self) -> None:
        if self._signature is not None:
            return
        conn = await asyncpg.connect(self.url_of(self.template))
        try:
            self._signature = await conn.fetchval(SIGNATURE)
            tables = [row["name"] for row in await conn.fetch(TABLES)]
        finally:
            await conn.close()
        # A lock no client holds any more (all were cut off) is never waited for long:
        # past the bound the wipe fails and the database is dropped instead.
        self._wipe = ("SET LOCAL session_replication_role = replica;\n"
                      "SET LOCAL lock_timeout = '10s';\n"
                      + "".join(f"DELETE FROM {table};\n" for table in sorted(tables)))

    async def _recycle(self, name: str) -> str | None:
        await self._learn_template()
        admin = await self._admin_connection()
        await admin.fetchval(TERMINATE, name)
        conn = await asyncpg.connect(self.url_of(name))
        try:
            async with conn.transaction():
                assert self._wipe is not None
                await conn.execute(self._wipe)
            same = (await conn.fetchval(SIGNATURE) == self._signature
                    and await conn.fetchval(OVERSIZED) == 0)
            if same:
                await conn.execute("SELECT pg_stat_reset()")
        finally:
            await conn.close()
        if not same:
            return None
        # Anyone who connected since (a leaked client retrying) is cut off again; the
        # rename then fails only if one got in between, and the database is dropped.
        await admin.fetchval(TERMINATE, name)
        fresh = f"t_{uuid.uuid4().hex[:12]}"
        try:
            await admin.execute(f"ALTER DATABASE {_quote(name)} RENAME TO {_quote(fresh)}")
        except asyncpg.ObjectInUseError:
            return None
        self.spare = fresh
        return fresh
