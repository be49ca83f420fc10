"""The composition root: how the service is assembled from its parts.

`app.build_app` lists the lifecycle contexts in their order: the fatal stop,
storage, providers, the Telegram notifier, the pipeline, Telegram intake.
"""
