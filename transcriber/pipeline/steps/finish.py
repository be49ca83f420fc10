"""`transcribed → done`: the transcript is final.

What follows `done` — the Telegram record's reply among it — is no step's
business: the step actor writes every follow-up's row with the advance and
tells their workers after it lands (`followups.after`), so a step that lost
its claim replies to no one and an undelivered reply never fails the step
(P6). HTTP records get no reply.
"""

from __future__ import annotations

from transcriber.core.errors import PermanentFailure
from transcriber.pipeline.step import Advanced, Job, Outcome
from transcriber.pipeline.steps._common import load_record


class FinishStep:
    name = "finish"

    def time_limit_seconds(self, job: Job) -> float | None:
        return None

    async def run(self, job: Job) -> Outcome:
        record = await load_record(job)
        if record.source not in ("telegram", "http"):
            raise PermanentFailure("the record has an unknown source")
        return Advanced()
