"""In-package fakes for fast tests: clock, notifier, recognizer, object store, steps,
the Telegram and OpenAI servers, the SpeechKit API, the webhook receiver.

Imports: any floor (it stands above them all); only tests import it
(`tests/unit/test_layers.py` keeps it so).
"""
