"""Adapters behind the ports: ffmpeg (`ffmpeg`, `media`), Whisper (`whisper` and its
decoding modules), SpeechKit (`speechkit`), the object store and the record files
(`object_store`, `local_files`, `s3_files`), the webhook transport, the describers
(`describe`) and the speaker engine (`speakers`, used through its `__init__`).

Imports: the floors below (`core`, `domain`, `settings`, `ports`, `db`); never the
pipeline, the doors or anything above.
"""
