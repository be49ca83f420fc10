"""transcriber: a self-hosted archive of recordings with a durable transcription pipeline.

The package is built in floors, each importing only its own floor and those below
(`tests/unit/test_layers.py`): `core`, `domain`, `settings` and `ports`, `db`,
`providers`, `pipeline`, the doors (`web`, `bot`), `maintenance`, the composition
(`service`, `loadtest`), `cli`; `testing` above all, for tests. The top level holds
packages only; docs/architecture.md says what goes where.
Imports: nothing (it holds the version alone, so importing any floor stays light).
"""

__version__ = "0.1.0"
