"""The watched folder's rules (docs/watched-folder.md), pure: which names are a
recording to take, which are a sync tool's file still arriving, and when a file has
stopped growing long enough to be taken whole.

A phone's sync app (Syncthing, Nextcloud, Dropbox-like clients) writes a file under a
temporary name and renames it when complete; a copy over a network share or `cp`
writes under the final name, and only a size (and modification time) that stays the
same for `watch.stable_seconds` says it is finished. Both are handled: the temporary
names are never taken, and no file is taken before it has been still that long.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

DONE_DIR = "done"
FAILED_DIR = "failed"
# The side file beside a failed one: `failed/<name>.reason.txt`.
REASON_SUFFIX = ".reason.txt"

# What a recorder or messenger saves; the probe still decides (a `.txt` renamed `.mp3`
# goes to `failed/`), this only keeps the folder's other files (notes, photos) alone.
AUDIO_SUFFIXES = frozenset({
    ".mp3", ".m4a", ".m4b", ".aac", ".ogg", ".oga", ".opus", ".wav", ".flac", ".webm",
    ".weba", ".amr", ".3gp", ".3gpp", ".wma", ".mp4", ".mka", ".caf", ".aif", ".aiff",
})
# The names sync tools and browsers give a file still arriving.
PARTIAL_SUFFIXES = (".part", ".partial", ".tmp", ".temp", ".crdownload", ".download",
                    ".!sync", ".filepart", ".syncthing")
PARTIAL_PREFIXES = (".", "~", ".syncthing.", ".~")


def is_candidate(name: str) -> bool:
    """Pure: a name the watched folder may take once it is still (an audio suffix; not
    hidden, not a partial name of Syncthing (`.syncthing.x.tmp`, `~syncthing~x.tmp`),
    Nextcloud (`x.part`, `.x.~1234`), a browser's or a copy tool's)."""
    lowered = name.lower()
    if lowered.startswith(PARTIAL_PREFIXES) or "~syncthing~" in lowered:
        return False
    if lowered.endswith(PARTIAL_SUFFIXES) or lowered.endswith("~"):
        return False
    dot = lowered.rfind(".")
    return dot > 0 and lowered[dot:] in AUDIO_SUFFIXES


@dataclass(frozen=True, slots=True, kw_only=True)
class Seen:
    """One file as one look at the folder found it."""

    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Watched:
    """A file being watched: what it was, and since when it has been so (monotonic s)."""

    seen: Seen
    since: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Look:
    """The outcome of one look (pure): the files still watched, and those to take now."""

    watching: Mapping[str, Watched]
    ready: tuple[str, ...]


def look(previous: Mapping[str, Watched], found: Mapping[str, Seen], *, now: float,
         stable_seconds: float) -> Look:
    """Pure: after a look at a folder (`found`: its candidate files by path), which are
    ready (unchanged in size and modification time for `stable_seconds`, and not
    empty). A file that changed starts its wait again; a file gone is forgotten; a
    ready file stays watched until it is moved away (so it is not taken twice while
    its taking runs)."""
    watching: dict[str, Watched] = {}
    ready: list[str] = []
    for path, seen in sorted(found.items()):
        before = previous.get(path)
        if before is None or before.seen != seen:
            watching[path] = Watched(seen=seen, since=now)
            continue
        watching[path] = before
        if seen.size > 0 and now - before.since >= stable_seconds:
            ready.append(path)
    return Look(watching=watching, ready=tuple(ready))


def free_name(name: str, taken: Iterable[str]) -> str:
    """Pure: `name`, or `name (2)`, `name (3)`… before its suffix, whichever is not taken
    (a second `memo.m4a` moved to `done/` keeps the first)."""
    used = set(taken)
    if name not in used:
        return name
    dot = name.rfind(".")
    stem, suffix = (name[:dot], name[dot:]) if dot > 0 else (name, "")
    number = 2
    while f"{stem} ({number}){suffix}" in used:
        number += 1
    return f"{stem} ({number}){suffix}"
