"""Where `transcriber upload --wait --output DIR` writes each transcript, and the writing.

The name comes from the local file's name only, never from anything the
server said (a record id `x/../../x` would otherwise choose the path): `talk.mp3`
becomes `DIR/talk.<format>`. Files sharing a stem get `-2`, `-3`… in the order
they were given (`talk.mp3 talk.wav` → `talk.srt`, `talk-2.srt`), so the same
command always writes the same names. A name that already exists in DIR is
refused before anything is uploaded, unless `--force`; the write itself creates
the file exclusively (`O_EXCL`, `O_NOFOLLOW`: a file or symlink that appeared
meanwhile is not written through), and with `--force` replaces the name by a
rename (a symlink there is replaced, never followed).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from transcriber.cli.texts import say


def output_names(paths: list[Path], folder: Path, fmt: str, *,
                 force: bool) -> dict[int, Path] | str:
    """Pure but for looking at DIR: the target of each file (by its position), or why
    not (a name that exists, without `--force`)."""
    taken: set[str] = set()
    targets: dict[int, Path] = {}
    for position, path in enumerate(paths):
        name = f"{path.stem}.{fmt}"
        copy = 2
        # Case-folded: two names one case-insensitive file system takes for one.
        while name.casefold() in taken:
            name = f"{path.stem}-{copy}.{fmt}"
            copy += 1
        taken.add(name.casefold())
        target = inside(folder, name)
        if not force and os.path.lexists(target):
            return say("upload.output_exists", path=target)
        targets[position] = target
    return targets


def inside(folder: Path, name: str) -> Path:
    """`folder/name`, a plain name directly inside the folder (a promise kept by
    construction: the name is a local file's stem; checked all the same)."""
    if name in ("", ".", "..") or "/" in name or "\0" in name or os.sep in name:
        raise ValueError("an output name must be one plain file name")
    target = folder / name
    if target.parent != folder:
        raise ValueError("an output name must stay inside its folder")
    return target


def write(target: Path, text: str | bytes, *, force: bool) -> None:
    """Write `text` (UTF-8), or a document's bytes, to `target`: a new file, or with
    `force` a rename over the old name. Raises `OSError` (the caller says it in one line)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    if not force:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return
    fd, part = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(part, 0o644)
        os.replace(part, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise
