"""An in-memory object store that records its calls."""

from __future__ import annotations

import asyncio
from collections import deque
from pathlib import Path


class FakeObjectStore:
    """Implements the `ObjectStore` port; `objects` maps keys to bytes."""

    def __init__(self, *, endpoint_url: str = "https://storage.example", bucket: str = "b") -> None:
        self.endpoint_url = endpoint_url
        self.bucket = bucket
        self.objects: dict[str, bytes] = {}
        self.heads: list[str] = []
        self.uploads: list[str] = []
        self.deletes: list[str] = []
        self.upload_faults: deque[BaseException] = deque()
        # A fault raised once, by the first upload of that key.
        self.upload_faults_by_key: dict[str, BaseException] = {}

    async def exists(self, key: str) -> bool:
        self.heads.append(key)
        return key in self.objects

    async def upload(self, key: str, source: Path) -> None:
        if self.upload_faults:
            raise self.upload_faults.popleft()
        if key in self.upload_faults_by_key:
            raise self.upload_faults_by_key.pop(key)
        self.uploads.append(key)
        self.objects[key] = await asyncio.to_thread(source.read_bytes)

    async def delete(self, key: str) -> None:
        self.deletes.append(key)
        self.objects.pop(key, None)

    def uri(self, key: str) -> str:
        return f"{self.endpoint_url}/{self.bucket}/{key}"
