"""Paths taken from outside, and names kept from outside: a file reached only inside
its folder (no `..`, no symlink on the way, no FIFO at the end), a sender's file
name cleaned before it is stored (it never becomes a path)."""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from transcriber.core.errors import UnsafePath

ORIGINAL_NAME_MAX = 255


def clean_original_name(raw: str | None) -> str:
    """The sender's name as kept in the database: no control chars, ≤ 255 chars."""
    if not raw:
        return ""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    return name.strip()[:ORIGINAL_NAME_MAX]


# -- paths taken from outside -----------------------------------------------------------
#
# A backup's `files` rows, a stored row after a restore, a local Bot API's
# answer: each names a file that must lie inside one folder. Every component
# is one plain name, and the walk down from the folder opens each with
# O_NOFOLLOW, so a `..`, an absolute path or a symlink anywhere on the way is
# refused rather than followed (a resolved-path check would race a symlink
# swapped in after it). The folder itself is the operator's and may be reached
# through symlinks.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted under a file's name must not wait for a writer.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def plain_name(name: str) -> bool:
    """Pure: `name` is one path component naming something inside its folder."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def open_inside(root: Path, names: Sequence[str]) -> int:
    """A descriptor of the regular file `root/names[0]/…/names[-1]`.

    Raises `UnsafePath` for a name that is not plain, a symlink or a
    non-folder on the way, or an end that is not a regular file (a symlink, a
    folder, a FIFO, a device); `FileNotFoundError` when something is missing.
    """
    if not names or not all(plain_name(name) for name in names):
        raise UnsafePath("a path component is not a plain name")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in names[:-1]:
            try:
                inner = os.open(name, _DIR_FLAGS, dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafePath("a folder on the way is a symlink or not a folder"
                                     ) from None
                raise
            os.close(folder)
            folder = inner
        try:
            fd = os.open(names[-1], _FILE_FLAGS, dir_fd=folder)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise UnsafePath("the file is a symlink or not a regular file") from None
            raise
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath("the file is not a regular file")
    return fd


def stat_inside(root: Path, names: Sequence[str]) -> os.stat_result:
    """The stat of the regular file `open_inside` reaches (same refusals)."""
    fd = open_inside(root, names)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def relative_names(path: str, roots: Sequence[Path]) -> tuple[str, ...]:
    """Pure: the components of the absolute `path` below the first of `roots` it lies
    under, taken as written (a `..` stays and `open_inside` refuses it);
    `UnsafePath` if it is under none."""
    given = Path(path)
    if not given.is_absolute():
        raise UnsafePath("the path is not absolute")
    for root in roots:
        if given.is_relative_to(root):
            names = given.relative_to(root).parts
            if names:
                return names
    raise UnsafePath("the path is outside the folder")


def open_file_inside(root: Path, names: Sequence[str]) -> BinaryIO:
    """The regular file `open_inside` reaches, opened for reading (same refusals)."""
    return os.fdopen(open_inside(root, names), "rb")
