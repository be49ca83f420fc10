"""`verify`: is a data folder (or a backup) complete and consistent?

Checks, each a list of problems (empty when all is well): SQLite's own
`integrity_check`; `foreign_key_check`; every `files` row names a regular
file inside the folder (plain names, no symlink on the way: `paths.open_inside`;
a row with `..`, an absolute path or a symlink is an `unsafe_files` problem,
never followed) with its size; no file in the record folders without a row; the search index
holds exactly the terms its records and transcripts give (rebuilt into a
temporary index and compared term by term; records the service has yet to index
under migration 0012's word forms are counted as `records_to_index`, not
compared). Meant for a folder no process writes: a live one shows its uploads in
flight as files without a row. With `storage.files = s3` the files checked are
the bucket's objects (`objects`: each record file's size, listed beforehand),
by the same rules: present, of the row's size, none without a row.
"""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from transcriber.core.errors import UnsafePath
from transcriber.core.paths import stat_inside
from transcriber.db.connection import open_snapshot
from transcriber.db.reads import maintenance
from transcriber.providers.local_files import RECORDS_DIR

LIST_MAX = 50  # problems of one kind shown; the count is always whole


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    counts: dict[str, int]
    problems: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(self.problems.values())


def verify(db_path: Path, files_root: Path, *,
           objects: Mapping[tuple[str, str], int] | None = None) -> Report:
    """`db_path`: the database; `files_root`: the folder holding `records/`, or
    `objects`: the record files of a bucket by (record id, file name), their sizes."""
    if not db_path.is_file():
        return Report(counts={}, problems={"database": [f"no database at {db_path}"]})
    conn = open_snapshot(db_path)
    try:
        integrity = maintenance.integrity(conn)
        problems: dict[str, list[str]] = {
            "integrity": [] if integrity == ["ok"] else integrity,
            "foreign_keys": [f"{p.table} row {p.rowid} -> {p.parent}"
                             for p in maintenance.foreign_key_problems(conn)],
        }
        counts = maintenance.counts(conn).as_dict()
        problems |= (_check_files(conn, files_root) if objects is None
                     else _check_objects(conn, objects))
        search = maintenance.search_problems(conn)
        counts["records_to_index"] = search.pending
        problems["search"] = _search_problems(search)
    finally:
        conn.close()
    return Report(counts=counts, problems={k: v for k, v in problems.items() if v})


def _check_files(conn: sqlite3.Connection, files_root: Path) -> dict[str, list[str]]:
    named: set[tuple[str, str]] = set()
    missing, wrong_size, unsafe = [], [], []
    for entry in maintenance.files(conn):
        record_id, file_name = entry.record_id, entry.file_name
        relative = f"{RECORDS_DIR}/{record_id}/{file_name}"
        named.add((record_id, file_name))
        try:
            size = stat_inside(files_root, (RECORDS_DIR, record_id, file_name)).st_size
        except FileNotFoundError:
            missing.append(relative)
            continue
        except (UnsafePath, OSError) as exc:
            unsafe.append(f"{relative!r}: {exc}")
            continue
        if size != entry.size_bytes:
            wrong_size.append(f"{relative}: {size} bytes, the row says {entry.size_bytes}")
    return {"missing_files": missing, "wrong_size": wrong_size, "unsafe_files": unsafe,
            "files_without_row": _unnamed_files(files_root / RECORDS_DIR, named)}


def _check_objects(conn: sqlite3.Connection, objects: Mapping[tuple[str, str], int]
                   ) -> dict[str, list[str]]:
    named: set[tuple[str, str]] = set()
    missing, wrong_size = [], []
    for entry in maintenance.files(conn):
        names = (entry.record_id, entry.file_name)
        relative = f"{RECORDS_DIR}/{entry.record_id}/{entry.file_name}"
        named.add(names)
        size = objects.get(names)
        if size is None:
            missing.append(relative)
        elif size != entry.size_bytes:
            wrong_size.append(f"{relative}: {size} bytes, the row says {entry.size_bytes}")
    stray = [f"{RECORDS_DIR}/{record_id}/{name}"
             for record_id, name in sorted(set(objects) - named)]
    return {"missing_files": missing, "wrong_size": wrong_size, "files_without_row": stray}


def _unnamed_files(root: Path, named: set[tuple[str, str]]) -> list[str]:
    if root.is_symlink():
        return [RECORDS_DIR]
    if not root.is_dir():
        return []
    stray = []
    for folder in sorted(root.iterdir()):
        if not folder.is_dir() or folder.is_symlink():
            stray.append(f"{RECORDS_DIR}/{folder.name}")
            continue
        for path in sorted(folder.iterdir()):
            if (folder.name, path.name) not in named or not stat.S_ISREG(path.lstat().st_mode):
                stray.append(f"{RECORDS_DIR}/{folder.name}/{path.name}")
    return stray


def _search_problems(problems: maintenance.SearchProblems) -> list[str]:
    found = [f"record {record_id} has no search key" for record_id in problems.without_key]
    found += [f"search key of a record that does not exist: {record_id}"
              for record_id in problems.key_without_record]
    found += [f"search terms of record {record_id or '(no key)'} differ from the record"
              for record_id in problems.differing]
    return found
