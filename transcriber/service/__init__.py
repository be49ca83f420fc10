"""The composition root: how the service is assembled from its parts.

`app.build_app` lists the lifecycle contexts in their order: the fatal stop,
storage, providers, the Telegram notifier, the pipeline, Telegram intake.

`maintenance` (backup, restore, verify, move) is not here: the CLI runs it beside
or instead of the service. Imports: any floor below (the doors included); only
`cli` and `testing` stand above it.
"""
