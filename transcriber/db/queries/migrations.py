CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL,
    checksum   TEXT NOT NULL,
    applied_at TEXT NOT NULL
) STRICT
"""

SELECT_APPLIED = "SELECT version, checksum FROM schema_migrations ORDER BY version"

INSERT_APPLIED = """
INSERT INTO schema_migrations (version, name, checksum, applied_at)
VALUES (:version, :name, :checksum, :applied_at)
"""
