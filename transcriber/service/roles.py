"""`transcriber serve --role all|web|worker`: what one process of the service runs.

Pure decisions; `service.app` installs the contexts and routes they name
(docs/operations.md, "Roles"):

- `web`: the doors (the API, the OpenAI door, the web app, the Telegram bot) and
  the duties that answer people (Telegram polling, the outbox and webhook
  deliveries, the sweeps); no step actors;
- `worker`: the step actors (`pipeline.workers` of them) and the describer, CPU
  work like a step's; only `/healthz`, `/readyz` and `/metrics` answer on its port;
- `all` (the default): both, as one process.

A one-shot command that runs the pipeline in its own process (`transcriber
transcribe`) is a worker that takes no duty: what its steps leave to the
outbox, the webhooks or the describer waits for the service's processes, so a
long run never holds a duty away from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from transcriber.ports import Duty


class Role(StrEnum):
    ALL = "all"
    WEB = "web"
    WORKER = "worker"


@dataclass(frozen=True, slots=True, kw_only=True)
class RolePlan:
    doors: bool
    """The API, the OpenAI door and the web app on the port (else only the operator
    endpoints answer), and the Telegram bot."""
    step_actors: bool
    duties: frozenset[Duty]
    """The singleton duties this process asks for (it runs each only while it holds it)."""


# The watched folders' files go in as uploads do: a door's duty.
_DOOR_DUTIES = frozenset({Duty.TELEGRAM_POLLING, Duty.OUTBOX, Duty.SWEEPS, Duty.WATCH})
_WORKER_DUTIES = frozenset({Duty.DESCRIBER})


def plan_of(role: Role, *, one_shot: bool = False) -> RolePlan:
    if one_shot:
        return RolePlan(doors=False, step_actors=True, duties=frozenset())
    doors = role in (Role.ALL, Role.WEB)
    steps = role in (Role.ALL, Role.WORKER)
    return RolePlan(doors=doors, step_actors=steps,
                    duties=(_DOOR_DUTIES if doors else frozenset())
                    | (_WORKER_DUTIES if steps else frozenset()))
