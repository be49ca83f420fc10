"""What follows `done` is written in one place: the follow-ups' list.

The rows of the reply, the description and the webhooks of `done` and halts are
enqueued only by the entries of `followups/registry.py` (a deletion's
`record.deleted` webhooks by the deletion itself, which is no pipeline occasion);
no other module of the package calls their enqueue functions. And the follow-ups'
queues share one worker and one retry rule: each consumer subclasses `QueueWorker`,
and no consumer computes a backoff or reads `Retry-After` itself."""

from __future__ import annotations

import ast
from pathlib import Path

import transcriber
from transcriber.followups.describe import DescriberActor
from transcriber.followups.queue import QueueWorker
from transcriber.followups.registry import FOLLOWUPS
from transcriber.followups.reply import Outbox
from transcriber.followups.webhooks import WebhookDelivery

PACKAGE = Path(transcriber.__file__).parent
ENQUEUES = {"enqueue_reply", "enqueue_description", "enqueue_event"}
ALLOWED = {"followups/registry.py", "db/commands/edits.py"}  # edits: `record.deleted`


def _calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            names.add(name)
    return names


def test_only_the_list_enqueues_what_follows_done() -> None:
    callers = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                     if _calls(path) & ENQUEUES)
    assert set(callers) <= ALLOWED, callers
    deletion = _calls(PACKAGE / "db/commands/edits.py") & ENQUEUES
    assert deletion == {"enqueue_event"}


def test_the_list_declares_each_follow_up_once_with_a_worker_of_the_one_kind() -> None:
    names = [followup.name for followup in FOLLOWUPS]
    assert names == ["telegram-outbox", "describer", "webhook-delivery"]
    assert all(issubclass(kind, QueueWorker) for kind in (Outbox, DescriberActor,
                                                          WebhookDelivery))
    for kind in (Outbox, DescriberActor, WebhookDelivery):
        assert "run" not in vars(kind), f"{kind.__name__} loops on its own"


def test_no_consumer_computes_its_own_backoff_or_reads_retry_after() -> None:
    for name in ("reply", "describe", "webhooks"):
        calls = _calls(PACKAGE / "followups" / f"{name}.py")
        assert not calls & {"backoff_base_seconds", "backoff_seconds",
                            "parsedate_to_datetime"}, name
