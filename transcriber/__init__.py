"""transcriber: a self-hosted archive of recordings with a durable transcription pipeline."""

__version__ = "0.1.0"
