"""Resumable uploads (tus): the rows of uploads in flight (migrations/0022_uploads.sql)."""

INSERT = """
INSERT INTO uploads (id, owner_id, length, received, deferred, filename, language, space,
                     created_at, expires_at)
VALUES (:id, :owner_id, :length, 0, :deferred, :filename, :language, :space, :now,
        :expires_at)
"""

_COLUMNS = """
SELECT id, owner_id, length, received, deferred, filename, language, space, created_at, expires_at,
       record_id
FROM uploads
"""

# Another person's upload reads as no upload at all (404, never 403).
OWNED = _COLUMNS + "WHERE id = :id AND owner_id = :owner_id\n"

BY_ID = _COLUMNS + "WHERE id = :id\n"

# Open (unfinished) uploads of one person: the cap on how many one may hold.
OPEN_OF_OWNER = """
SELECT count(*) AS n FROM uploads WHERE owner_id = :owner_id AND record_id IS NULL
"""

# Compare-and-set: the bytes stored for good move from `expected` to `received`
# only if nobody moved them meanwhile (a second PATCH, another process).
ADVANCE = """
UPDATE uploads SET received = :received, expires_at = :expires_at
WHERE id = :id AND received = :expected AND record_id IS NULL
"""

# A deferred length named once, never below what is stored.
SET_LENGTH = """
UPDATE uploads SET length = :length, deferred = 0
WHERE id = :id AND deferred = 1 AND received <= :length
"""

# Run in `AcceptRecord`'s transaction, beside the record the upload became.
FINISH = "UPDATE uploads SET record_id = :record_id WHERE id = :id AND record_id IS NULL\n"

DELETE = "DELETE FROM uploads WHERE id = :id\n"

# The sweeper's batch: by the expiry index, oldest first, a bounded number at once.
EXPIRED = _COLUMNS + "WHERE expires_at < :now ORDER BY expires_at LIMIT :batch\n"
