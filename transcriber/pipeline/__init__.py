"""The pipeline: step actors, the engine, policy (pure decisions), the steps, part
planning, the speakers' decision, intake (a stream stored as a new record) and the
effects of a finished record (reply, description).

Imports: `core`, `domain`, `settings`, `ports` and `db`; never `providers` (the
adapters come in through the step table, typed by their ports) nor anything above.
"""
