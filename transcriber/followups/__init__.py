"""What follows a record's `done` (and its halt): the follow-ups.

- `registry`: the one declared list, `FOLLOWUPS` (reply, describe, webhooks):
  each entry's occasions, its row written in the occasion's transaction, its
  worker's build and duty. A new follow-up is one consumer module plus one entry.
- `queue`: the one durable-queue worker (`QueueWorker`) every consumer subclasses.
- `retry`: the one retry rule (backoff, `Retry-After`, give up).
- `reply`, `describe`, `webhooks`: the consumers, one module each.
- `after`: what the step actor does with the list at `done` and halts.
- `card`: the record card, built from readers, settings and the clock, for the
  web door and the webhooks consumer alike.

Sits on the pipeline's floor (`tests/unit/test_layers.py`); the pipeline's step
actor imports `after` and `parts`, the doors `card`, the service the rest.
Imports: `core`, `domain`, `settings`, `ports`, `db` and the pipeline's pure parts
(`policy`, `progress`); no provider: adapters come in through `parts.Parts`.
"""
