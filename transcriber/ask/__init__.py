"""Ask the archive: a question answered from what was said (docs/ask.md).

- `retrieval`: the records a question may be answered from (through the search's
  own read, `reads.lists.search_page`: the same people see the same records) and
  their passages (`domain.ask_passages`).
- `answers`: the answer: offline, the passages and their marked sentences; with a
  language model (the `Answerer` port), a short text whose citations are checked.

Sits on the pipeline's floor (`tests/unit/test_layers.py`), used by the doors (web,
bot) and the CLI. Imports: `core`, `domain`, `settings`, `ports`, `db`; no provider:
the language model comes in through `ports.Answerer`.
"""
