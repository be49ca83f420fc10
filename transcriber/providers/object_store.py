"""Object Storage over the S3 API (aiobotocore): path-style, presence by HEAD.

Yandex Object Storage wants path-style addressing, the `ru-central1` region
and no unrequested checksum headers (`request_checksum_calculation=
"when_required"`, which newer botocore releases otherwise add and older
S3-compatible servers reject). Big files go up in multipart uploads.
Presence is checked with HEAD (P13): a multipart object's ETag is no content
hash. SDK errors carry the full object URL: every error leaving this module
is rebuilt from the operation name and the error code only.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import structlog
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import BotoCoreError, ClientError

from transcriber.errors import ConfigError, PermanentFailure, StepFailure, TransientFailure
from transcriber.observability import PROVIDER_CALL_SECONDS
from transcriber.settings import S3Settings

log = structlog.get_logger(__name__)

MULTIPART_THRESHOLD = 64 * 1024 * 1024
PART_SIZE = 32 * 1024 * 1024
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


class S3ObjectStore:
    """The `ObjectStore` port; `start()` opens the client, `close()` releases it."""

    def __init__(self, settings: S3Settings) -> None:
        if not settings.bucket:
            raise ConfigError("s3.bucket", "must be set when recognizer.provider is speechkit")
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
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 404 or exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
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

    def _require_client(self) -> Any:
        if self._client is None:
            raise TransientFailure("object storage client is not started")
        return self._client

    def _failure(self, exc: BaseException, operation: str) -> StepFailure:
        failure = classify_s3_error(exc, operation=operation)
        log.warning("object_store_failed", operation=operation, kind=type(failure).__name__,
                    reason=failure.reason)
        return failure
