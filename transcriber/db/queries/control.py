"""Connection settings and transaction control, named like every other statement."""

PRAGMA_BUSY_TIMEOUT = "PRAGMA busy_timeout = {milliseconds:d}"  # PRAGMA takes no parameters
PRAGMA_FOREIGN_KEYS_ON = "PRAGMA foreign_keys = ON"
PRAGMA_JOURNAL_WAL = "PRAGMA journal_mode = WAL"
PRAGMA_SYNCHRONOUS_FULL = "PRAGMA synchronous = FULL"
PRAGMA_SECURE_DELETE_ON = "PRAGMA secure_delete = ON"
PRAGMA_TEMP_STORE_MEMORY = "PRAGMA temp_store = MEMORY"
# Answers one row (busy, log, checkpointed): busy = 1 when a reader's snapshot kept it short.
PRAGMA_WAL_CHECKPOINT_TRUNCATE = "PRAGMA wal_checkpoint(TRUNCATE)"

BEGIN_IMMEDIATE = "BEGIN IMMEDIATE"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"
SAVEPOINT = "SAVEPOINT command"
ROLLBACK_TO_SAVEPOINT = "ROLLBACK TO command"
RELEASE_SAVEPOINT = "RELEASE command"

READY_PROBE = "SELECT 1 AS ok"
