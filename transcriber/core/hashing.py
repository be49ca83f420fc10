"""A file's SHA-256 and its bytes as a stream, read in chunks (model files, database
copies and records are large)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncGenerator
from pathlib import Path

HASH_CHUNK_BYTES = 4 * 1024 * 1024


def sha256_of(path: Path) -> str:
    """The file's SHA-256, read in chunks (model files and database copies are large)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


async def read_chunks(path: Path, chunk_size: int) -> AsyncGenerator[bytes]:
    """A file as a stream of chunks, read off the event loop (for `place_stream`)."""
    handle = await asyncio.to_thread(path.open, "rb")
    try:
        while chunk := await asyncio.to_thread(handle.read, chunk_size):
            yield chunk
    finally:
        handle.close()
