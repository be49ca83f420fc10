"""One error root for the whole service.

Failures carry their kind as a type: a *transient* failure is retried with
backoff, a *permanent* one halts the record at once (P17, openspec/specs/pipeline/spec.md). Anything
that is not a `TranscriberError` is treated as transient by the step actor.
"""

from __future__ import annotations


class TranscriberError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigError(TranscriberError):
    """A setting has a bad value; the message names the key and the problem."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


class NotFound(TranscriberError):
    """The thing asked for does not exist (or is not the asker's)."""


class Conflict(TranscriberError):
    """The request contradicts the current state (e.g. resuming a running record)."""


class MigrationError(TranscriberError):
    """The schema cannot be brought up to date; the start is aborted."""


class NoWork(TranscriberError):
    """No record is eligible right now (P1).

    Born only from the claim answer of the same run. It is a value (the claim
    command returns an instance) and may also travel as an exception; either
    way it is recognised by type at any depth of wrapping
    (`pipeline.policy.is_no_work`).
    """


class ClaimLost(TranscriberError):
    """The acquisition token no longer matches (P3): the lease expired and another
    actor claimed the record, or a person resumed it. The write was not made."""

    def __init__(self) -> None:
        super().__init__("claim lost")


class WriterUnavailable(TranscriberError):
    """The DB writer actor has stopped or died; no write can be made."""


class TooLarge(TranscriberError):
    """An input exceeded a hard size limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"input exceeds the limit of {limit} bytes")
        self.limit = limit


class IncompleteInput(TranscriberError):
    """An input stream ended before its declared length."""


class StepFailure(TranscriberError):
    """Base of the two failure kinds a pipeline step can report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TransientFailure(StepFailure):
    """Retry later: network, timeouts, 429/5xx, a full disk.

    `retry_after` lets the failing side ask for a longer wait than the
    computed backoff (like arq's `Retry(defer=...)`); the larger one wins.
    """

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class PermanentFailure(StepFailure):
    """Retrying cannot help: halt the record with `step_failed` now."""


class StorageFull(TransientFailure):
    """The disk holding the data folder has no room (before a write, or during
    one): transient, a retry after space is freed succeeds (P17)."""

    def __init__(self, reason: str = "the disk holding the data folder is full") -> None:
        super().__init__(reason)


class UnsafePath(TranscriberError):
    """A path taken from outside (a backup, a stored row, a Bot API answer) would
    leave its folder, pass a symlink, or name something that is not a regular file.
    The message never carries the path."""


class QuotaExceeded(TranscriberError):
    """A new record would take its owner's queued audio (records not done and not
    halted) past `server.queued_audio_max_seconds_per_user`."""

    def __init__(self, *, queued_ms: int, limit_ms: int) -> None:
        super().__init__(f"{queued_ms} ms of audio queued; the limit is {limit_ms} ms")
        self.queued_ms = queued_ms
        self.limit_ms = limit_ms


class QueryTooBroad(TranscriberError):
    """A search query whose words typed in part would expand too far
    (`transcriber.domain.search`); `reason` is `prefix_too_short` or `too_many_prefixes`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
