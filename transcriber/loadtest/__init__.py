"""`transcriber loadtest`: the real writer, readers and step actors with simulated
steps on a throwaway archive, and the invariants read back afterwards.

Imports: the floors up to the pipeline (storage, providers, the step actors); it
composes its own service beside `service`, never from it, and no door.
"""
