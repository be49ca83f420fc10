"""In-package fakes for fast tests: clock, notifier, recognizer, object store, steps."""
