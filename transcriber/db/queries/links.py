"""Links for people outside (`record_links`; docs/sharing.md, "Links")."""

INSERT = """
INSERT INTO record_links (id, record_id, created_by, secret_hash, audio, created_at,
                          expires_at)
VALUES (:id, :record_id, :created_by, :secret_hash, :audio, :now, :expires_at)
"""

_LISTED = """
SELECT l.id, l.record_id, l.audio, l.created_at, l.expires_at, l.views, l.last_opened_at
FROM record_links AS l
"""

BY_ID = _LISTED + "WHERE l.id = :id\n"

# A record's links, newest first (at most `links.per_record_max` rows: the index's range).
OF_RECORD = _LISTED + (
    "WHERE l.record_id = :record_id\nORDER BY l.created_at DESC, l.id DESC\n")

COUNT_OF_RECORD = "SELECT count(*) AS n FROM record_links WHERE record_id = :record_id\n"

# Made before a new link of the record is counted: expired links leave the list then.
DELETE_EXPIRED_OF_RECORD = """
DELETE FROM record_links WHERE record_id = :record_id AND expires_at <= :now
"""

DELETE_OF_RECORD = "DELETE FROM record_links WHERE id = :id AND record_id = :record_id\n"

# The link a visitor presents: one lookup by the stored hash, with its record's owner.
OPEN_BY_HASH = """
SELECT l.id, l.record_id, l.secret_hash, l.audio, l.expires_at, r.owner_id
FROM record_links AS l JOIN audio_records AS r ON r.id = l.record_id
WHERE l.secret_hash = :secret_hash
"""

# One opening of the page: counted on the row (no row per view). Only while the
# link still holds: a link revoked or expired since it was read counts nothing.
COUNT_OPENING = """
UPDATE record_links SET views = views + 1, last_opened_at = :now
WHERE id = :id AND expires_at > :now
"""

VIEWS = "SELECT views FROM record_links WHERE id = :id\n"
