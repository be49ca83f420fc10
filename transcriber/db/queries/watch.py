"""The watched folder's remembered files (migration 0023): one row per file taken."""

# Written in `AcceptRecord`'s transaction, beside the record it became.
REMEMBER = """
INSERT INTO watched_files (sha256, record_id, taken_at) VALUES (:sha256, :record_id, :now)
"""

# Was a file with these bytes taken before? One lookup by the primary key.
TAKEN = "SELECT sha256, record_id, taken_at FROM watched_files WHERE sha256 = :sha256\n"
