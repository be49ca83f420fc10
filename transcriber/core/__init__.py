"""The kernel: what every floor uses and no feature owns — no domain word lives here.

`clock` (time, and the clock actors are given), `ids` (record and file ids),
`errors` (the one error root, `TranscriberError`), `observability` (structured
logs and the metrics registry), `paths` (a file reached only inside its folder;
a sender's name cleaned), `hashing` (a file's SHA-256 and its chunks).
Imports: the standard library and third-party libraries only, and other
`core` modules.
"""
