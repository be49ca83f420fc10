"""Writer commands, by area. Each is a frozen dataclass run by the writer actor.

Imports: the rest of `db` and the floors below it (`core`, `domain`, `settings`,
`ports`).
"""
