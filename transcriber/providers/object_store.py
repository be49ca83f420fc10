"""Object Storage over the S3 API (aiobotocore): path-style, presence by HEAD.

Yandex Object Storage wants path-style addressing, the `ru-central1` region
and no unrequested checksum headers (`request_checksum_calculation=
"when_required"`, which newer botocore releases otherwise add and older
S3-compatible servers reject). Big files go up in multipart uploads.
Presence is checked with HEAD (P13): a multipart object's ETag is no content
hash. SDK errors carry the full object URL: every error leaving this module
is rebuilt from the operation name and the error code only.

Record files (`storage.files = s3`, `providers.s3_files`) use the rest:
a stream written in fixed-size parts (`stream_upload`: one part in memory,
the object visible only when the upload completes, aborted otherwise),
ranged reads streamed in chunks, listing, server-side copies (in parts past
S3's 5 GiB single-copy limit) and batched deletes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import BotoCoreError, ClientError

from transcriber.core.errors import ConfigError, PermanentFailure, StepFailure, TransientFailure
from transcriber.core.observability import PROVIDER_CALL_SECONDS
from transcriber.settings import S3Settings

log = structlog.get_logger(__name__)

MULTIPART_THRESHOLD = 64 * 1024 * 1024
PART_SIZE = 32 * 1024 * 1024
# S3's smallest part (but the last) and its largest single copy.
MIN_PART_SIZE = 5 * 1024 * 1024
COPY_MAX_BYTES = 5 * 1024 * 1024 * 1024
READ_CHUNK_BYTES = 1024 * 1024
DELETE_BATCH = 1000
_MISSING_CODES = frozenset({"404", "NoSuchKey", "NotFound"})
_PERMANENT_CODES = frozenset({
    "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "NoSuchBucket",
    "InvalidBucketName", "EntityTooLarge", "InvalidArgument",
})


def classify_s3_error(exc: BaseException, *, operation: str) -> StepFailure:
    """Pure: a sanitized failure for an SDK error (no URL, no key, no message)."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "Unknown"))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        label = f"object storage {operation} failed: {code}"
        if code in _PERMANENT_CODES or status in (400, 401, 403):
            return PermanentFailure(label)
        return TransientFailure(label)
    return TransientFailure(f"object storage {operation} failed: {type(exc).__name__}")


class ObjectMissing(PermanentFailure):
    """The object does not exist (HEAD or GET answered 404)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectInfo:
    key: str
    size: int
    etag: str
    modified: datetime


def is_missing(exc: ClientError) -> bool:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status == 404 or exc.response.get("Error", {}).get("Code") in _MISSING_CODES


class S3ObjectStore:
    """The `ObjectStore` port; `start()` opens the client, `close()` releases it."""

    def __init__(self, settings: S3Settings) -> None:
        if not settings.bucket:
            raise ConfigError("s3.bucket", "must be set when recognizer.provider is speechkit "
                                           "or storage.files is s3")
        self._settings = settings
        self._stack = contextlib.AsyncExitStack()
        self._client: Any = None

    async def start(self) -> None:
        settings = self._settings
        config = AioConfig(
            s3={"addressing_style": "path"},
            signature_version="s3v4",
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
            connect_timeout=settings.connect_timeout_seconds,
            read_timeout=settings.read_timeout_seconds,
            retries={"max_attempts": 3, "mode": "standard"},
        )
        session = get_session()
        self._client = await self._stack.enter_async_context(session.create_client(
            "s3",
            endpoint_url=settings.endpoint_url,
            region_name=settings.region,
            aws_access_key_id=settings.access_key_id.value if settings.access_key_id else None,
            aws_secret_access_key=(settings.secret_access_key.value
                                   if settings.secret_access_key else None),
            config=config,
        ))

    async def close(self) -> None:
        await self._stack.aclose()
        self._client = None

    def uri(self, key: str) -> str:
        return f"{self._settings.endpoint_url.rstrip('/')}/{self._settings.bucket}/{key}"

    async def exists(self, key: str) -> bool:
        started = time.perf_counter()
        try:
            await self._require_client().head_object(Bucket=self._settings.bucket, Key=key)
        except ClientError as exc:
            if is_missing(exc):
                return False
            raise self._failure(exc, "head") from None
        except BotoCoreError as exc:
            raise self._failure(exc, "head") from None
        finally:
            PROVIDER_CALL_SECONDS.labels("s3", "head").observe(time.perf_counter() - started)
        return True

    async def delete(self, key: str) -> None:
        started = time.perf_counter()
        try:
            # S3 answers 204 for a key that does not exist: deleting twice is fine.
            await self._require_client().delete_object(Bucket=self._settings.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            raise self._failure(exc, "delete") from None
        finally:
            PROVIDER_CALL_SECONDS.labels("s3", "delete").observe(time.perf_counter() - started)

    async def upload(self, key: str, source: Path) -> None:
        started = time.perf_counter()
        try:
            size = (await asyncio.to_thread(source.stat)).st_size
            if size <= MULTIPART_THRESHOLD:
                body = await asyncio.to_thread(source.read_bytes)
                await self._require_client().put_object(
                    Bucket=self._settings.bucket, Key=key, Body=body, ContentType="audio/ogg")
            else:
                await self._multipart(key, source)
        except (ClientError, BotoCoreError) as exc:
            raise self._failure(exc, "upload") from None
        finally:
            PROVIDER_CALL_SECONDS.labels("s3", "upload").observe(time.perf_counter() - started)

    async def _multipart(self, key: str, source: Path) -> None:
        client = self._require_client()
        bucket = self._settings.bucket
        created = await client.create_multipart_upload(Bucket=bucket, Key=key,
                                                       ContentType="audio/ogg")
        upload_id = created["UploadId"]
        parts: list[dict[str, Any]] = []
        try:
            with await asyncio.to_thread(source.open, "rb") as handle:
                number = 1
                while chunk := await asyncio.to_thread(handle.read, PART_SIZE):
                    answer = await client.upload_part(Bucket=bucket, Key=key, PartNumber=number,
                                                      UploadId=upload_id, Body=chunk)
                    parts.append({"PartNumber": number, "ETag": answer["ETag"]})
                    number += 1
            await client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
        except BaseException:
            with contextlib.suppress(ClientError, BotoCoreError):
                await client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
            raise

    async def head(self, key: str) -> ObjectInfo:
        """The object's size, ETag and time; `ObjectMissing` when there is none."""
        with self._call("head"):
            answer = await self._require_client().head_object(Bucket=self._settings.bucket,
                                                              Key=key)
        return ObjectInfo(key=key, size=int(answer["ContentLength"]),
                          etag=str(answer.get("ETag", "")), modified=answer["LastModified"])

    async def stream_upload(self, key: str, chunks: AsyncIterable[bytes], *, part_size: int,
                            content_type: str = "application/octet-stream") -> int:
        """Write a stream as the object `key`, `part_size` bytes in memory at most (plus
        one chunk): one PUT when the whole stream fits in a part, else a multipart upload
        completed after the stream's end. On any failure (the stream's own included,
        re-raised as it is) nothing becomes visible and the upload is aborted."""
        client, bucket = self._require_client(), self._settings.bucket
        held: list[bytes] = []
        held_bytes = total = 0
        upload_id: str | None = None
        parts: list[dict[str, Any]] = []
        try:
            async for chunk in chunks:
                held.append(chunk)
                held_bytes += len(chunk)
                total += len(chunk)
                if held_bytes < part_size:
                    continue
                if upload_id is None:
                    with self._call("upload"):
                        created = await client.create_multipart_upload(
                            Bucket=bucket, Key=key, ContentType=content_type)
                    upload_id = created["UploadId"]
                body = b"".join(held)
                held.clear()
                held_bytes = 0
                parts.append(await self._part(key, upload_id, len(parts) + 1, body))
                del body
            body = b"".join(held)
            held.clear()
            if upload_id is None:
                with self._call("upload"):
                    await client.put_object(Bucket=bucket, Key=key, Body=body,
                                            ContentType=content_type)
                return total
            if body:
                parts.append(await self._part(key, upload_id, len(parts) + 1, body))
            with self._call("upload"):
                await client.complete_multipart_upload(
                    Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
        except BaseException:
            if upload_id is not None:
                with contextlib.suppress(ClientError, BotoCoreError):
                    await client.abort_multipart_upload(Bucket=bucket, Key=key,
                                                        UploadId=upload_id)
            raise
        return total

    async def _part(self, key: str, upload_id: str, number: int, body: bytes
                    ) -> dict[str, Any]:
        with self._call("upload_part"):
            answer = await self._require_client().upload_part(
                Bucket=self._settings.bucket, Key=key, PartNumber=number, UploadId=upload_id,
                Body=body)
        return {"PartNumber": number, "ETag": answer["ETag"]}

    async def read(self, key: str, *, start: int = 0, end: int | None = None,
                   chunk_size: int = READ_CHUNK_BYTES) -> AsyncGenerator[bytes]:
        """The bytes `start` to `end` (exclusive; None: to the end) of the object, in
        chunks as they arrive; `ObjectMissing` when there is none."""
        arguments: dict[str, Any] = {"Bucket": self._settings.bucket, "Key": key}
        if start or end is not None:
            arguments["Range"] = f"bytes={start}-{'' if end is None else end - 1}"
        with self._call("get"):
            answer = await self._require_client().get_object(**arguments)
        body = answer["Body"]
        try:
            while True:
                with self._call("get"):
                    chunk = await body.read(chunk_size)
                if not chunk:
                    return
                yield chunk
        finally:
            body.close()

    async def download(self, key: str, target: Path) -> int:
        """The object written to the new file `target` (flushed and fsynced); its size."""
        written = 0
        handle = await asyncio.to_thread(target.open, "xb")
        try:
            async for chunk in self.read(key):
                await asyncio.to_thread(handle.write, chunk)
                written += len(chunk)
            await asyncio.to_thread(_flush, handle)
        finally:
            handle.close()
        return written

    async def listing(self, prefix: str) -> AsyncIterator[ObjectInfo]:
        """Every object whose key starts with `prefix`."""
        paginator = self._require_client().get_paginator("list_objects_v2")
        pages = aiter(paginator.paginate(Bucket=self._settings.bucket, Prefix=prefix))
        while True:
            with self._call("list"):
                page = await anext(pages, None)
            if page is None:
                return
            for item in page.get("Contents", ()):
                yield ObjectInfo(key=item["Key"], size=int(item["Size"]),
                                 etag=str(item.get("ETag", "")), modified=item["LastModified"])

    async def copy(self, source: str, key: str, *, size: int,
                   part_size: int = COPY_MAX_BYTES) -> None:
        """A server-side copy (no byte passes through here); in parts of `part_size`
        past it (S3 copies at most 5 GiB in one request)."""
        client, bucket = self._require_client(), self._settings.bucket
        origin = {"Bucket": bucket, "Key": source}
        if size <= part_size:
            with self._call("copy"):
                await client.copy_object(Bucket=bucket, Key=key, CopySource=origin)
            return
        with self._call("copy"):
            created = await client.create_multipart_upload(Bucket=bucket, Key=key)
        upload_id = created["UploadId"]
        parts: list[dict[str, Any]] = []
        try:
            for number, first in enumerate(range(0, size, part_size), start=1):
                last = min(first + part_size, size) - 1
                with self._call("copy"):
                    answer = await client.upload_part_copy(
                        Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number,
                        CopySource=origin, CopySourceRange=f"bytes={first}-{last}")
                parts.append({"PartNumber": number, "ETag": answer["CopyPartResult"]["ETag"]})
            with self._call("copy"):
                await client.complete_multipart_upload(
                    Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
        except BaseException:
            with contextlib.suppress(ClientError, BotoCoreError):
                await client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
            raise

    async def delete_many(self, keys: list[str]) -> None:
        """Remove the objects (missing ones are no error), a thousand per request."""
        client = self._require_client()
        for first in range(0, len(keys), DELETE_BATCH):
            batch = [{"Key": key} for key in keys[first:first + DELETE_BATCH]]
            with self._call("delete"):
                answer = await client.delete_objects(
                    Bucket=self._settings.bucket, Delete={"Objects": batch, "Quiet": True})
            if answer.get("Errors"):
                raise self._failure(TransientFailure("some objects were not deleted"),
                                    "delete")

    @contextlib.contextmanager
    def _call(self, operation: str) -> Iterator[None]:
        """Time one request; rebuild its SDK error without URL or key (`ObjectMissing`
        for a 404)."""
        started = time.perf_counter()
        try:
            yield
        except ClientError as exc:
            if is_missing(exc):
                raise ObjectMissing(f"object storage {operation}: no such object") from None
            raise self._failure(exc, operation) from None
        except BotoCoreError as exc:
            raise self._failure(exc, operation) from None
        finally:
            PROVIDER_CALL_SECONDS.labels("s3", operation).observe(time.perf_counter() - started)

    def _require_client(self) -> Any:
        if self._client is None:
            raise TransientFailure("object storage client is not started")
        return self._client

    def _failure(self, exc: BaseException, operation: str) -> StepFailure:
        failure = exc if isinstance(exc, StepFailure) else classify_s3_error(
            exc, operation=operation)
        log.warning("object_store_failed", operation=operation, kind=type(failure).__name__,
                    reason=failure.reason)
        return failure


def _flush(handle: Any) -> None:
    handle.flush()
    os.fsync(handle.fileno())
