"""PostgreSQL's session-level advisory locks, the duty locks of several hosts
(`transcriber.db.duties`).

PostgreSQL statements only: SQLite has no such locks (one host locks a file of the
data folder instead), so this module is not among the package's `__all__`, whose
statements the SQLite plan test reads. asyncpg numbers its parameters (`$1`): the
one parameter of each is the duty's key, a signed 64-bit integer.
"""

TRY_TAKE = "SELECT pg_try_advisory_lock($1::bigint) AS taken"
GIVE_BACK = "SELECT pg_advisory_unlock($1::bigint) AS given_back"
# The holder's look at its own connection: the lock lives exactly as long as it does.
PROBE = "SELECT 1 AS ok"
