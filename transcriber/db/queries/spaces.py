"""Spaces, their members, direct shares, and what one person may see (docs/sharing.md).

The grant is one row: the record's owner and space, and the asking person's
role in that space and on a direct share (two primary-key lookups). A page of
what a person may see is one statement (`VISIBLE_PAGE_*`) over branches, each
an index range scan with its own LIMIT: the person's own records
(`idx_audio_records_owner_page`), each of their spaces'
(`idx_audio_records_space_page`) and those shared with them
(`idx_record_shares_user`).
"""

from __future__ import annotations

from transcriber.db.queries.archive import (
    _SEARCH_FROM,
    _SEARCH_HITS,
    PAGE_AFTER_CONDITION,
    RECORD_COLUMNS,
    page,
)

GRANT = """
SELECT r.id AS record_id, r.owner_id, r.space_id,
       (SELECT m.role FROM space_members AS m
        WHERE m.space_id = r.space_id AND m.user_id = :user_id) AS space_role,
       (SELECT s.role FROM record_shares AS s
        WHERE s.record_id = r.id AND s.user_id = :user_id) AS share_role
FROM audio_records AS r
WHERE r.id = :id
"""

# -- spaces and members ----------------------------------------------------------------

INSERT_SPACE = "INSERT INTO spaces (id, name, created_at) VALUES (:id, :name, :now)\n"

SPACE_BY_NAME = "SELECT id, name, created_at FROM spaces WHERE name = :name\n"

SPACE_BY_ID = "SELECT id, name, created_at FROM spaces WHERE id = :id\n"

# Every space, by name (`transcriber space list`: an operator's view; spaces are few).
ALL_SPACES = """
SELECT s.id, s.name, s.created_at, (SELECT count(*) FROM space_members AS m
                                   WHERE m.space_id = s.id) AS members
FROM spaces AS s ORDER BY s.name
"""

# A person's spaces with their role there (idx_space_members_user).
SPACES_OF_USER = """
SELECT s.id, s.name, s.created_at, m.role
FROM space_members AS m JOIN spaces AS s ON s.id = m.space_id
WHERE m.user_id = :user_id
ORDER BY s.name
"""

ROLE_IN_SPACE = """
SELECT m.role FROM space_members AS m WHERE m.space_id = :space_id AND m.user_id = :user_id
"""

MEMBERS = """
SELECT u.provider_login AS login, m.role, m.created_at
FROM space_members AS m JOIN users AS u ON u.id = m.user_id
WHERE m.space_id = :space_id
ORDER BY u.provider_login
"""

UPSERT_MEMBER = """
INSERT INTO space_members (space_id, user_id, role, created_at)
VALUES (:space_id, :user_id, :role, :now)
ON CONFLICT (space_id, user_id) DO UPDATE SET role = excluded.role
"""

DELETE_MEMBER = "DELETE FROM space_members WHERE space_id = :space_id AND user_id = :user_id\n"

COUNT_ADMINS = """
SELECT count(*) AS n FROM space_members WHERE space_id = :space_id AND role = 'admin'
"""

# A removed member's records leave the space with them (the owner keeps them, and
# the space keeps no record whose owner cannot see it): the owner's index range.
MEMBER_RECORDS = """
SELECT r.id FROM audio_records AS r WHERE r.owner_id = :user_id AND r.space_id = :space_id
"""

MEMBER_RECORDS_OUT = """
UPDATE audio_records SET space_id = NULL, updated_at = :now
WHERE owner_id = :user_id AND space_id = :space_id
"""

CLEAR_DEFAULT_SPACE = """
UPDATE users SET default_space_id = NULL WHERE id = :user_id AND default_space_id = :space_id
"""

SET_DEFAULT_SPACE = "UPDATE users SET default_space_id = :space_id WHERE id = :user_id\n"

DEFAULT_SPACE = "SELECT default_space_id FROM users WHERE id = :user_id\n"

# -- a record's space and shares ---------------------------------------------------------

MOVE_RECORD = "UPDATE audio_records SET space_id = :space_id, updated_at = :now WHERE id = :id\n"

UPSERT_SHARE = """
INSERT INTO record_shares (record_id, user_id, role, created_at)
VALUES (:record_id, :user_id, :role, :now)
ON CONFLICT (record_id, user_id) DO UPDATE SET role = excluded.role
"""

DELETE_SHARE = "DELETE FROM record_shares WHERE record_id = :record_id AND user_id = :user_id\n"

SHARES_OF_RECORD = """
SELECT u.provider_login AS login, s.role, s.created_at
FROM record_shares AS s JOIN users AS u ON u.id = s.user_id
WHERE s.record_id = :record_id
ORDER BY u.provider_login
"""

# The journal: a person's change, with who made it.
INSERT_JOURNAL = """
INSERT INTO record_events (id, record_id, origin, step, outcome, outcome_text, created_at,
                           actor_id)
VALUES (:id, :record_id, 'human', :step, 'done', :detail, :now, :actor_id)
"""

# -- pages of what a person may see -------------------------------------------------------

_SPACE_FROM = "FROM audio_records AS r\nWHERE r.space_id = :space_id"
SPACE_PAGE_FIRST = page(_SPACE_FROM, after=False)
SPACE_PAGE_AFTER = page(_SPACE_FROM, after=True)

# Shared with the person: their shares (idx_record_shares_user), each record by its key;
# the sort is over the person's shares, never the archive.
_SHARED_FROM = """
FROM record_shares AS s
JOIN audio_records AS r ON r.id = s.record_id
WHERE s.user_id = :user_id"""
SHARED_PAGE_FIRST = page(_SHARED_FROM, after=False)
SHARED_PAGE_AFTER = page(_SHARED_FROM, after=True)

# Everything a person may see, newest first, in one statement: the keys (created_at,
# id) of each branch's newest `:limit` — their own (idx_audio_records_owner_page),
# shared with them (idx_record_shares_user) and each of their spaces'
# (idx_audio_records_space_page) — merged and cut to the page, then the page's
# columns read for those `:limit` records only. Each branch is a short index range
# whatever the archive's size; the columns (two subqueries a record) are read once
# a record, not once a branch. A space's branch starts at its `:limit`-th newest
# record's time (a scalar subquery, one per space: SQLite has no LATERAL; PostgreSQL
# runs its LATERAL text, transcriber.db.postgres.queries): records of equal time
# beyond the `:limit` are kept as well, and cut by the page's own ORDER BY.
_SPACE_BRANCH = """
SELECT r.created_at, r.id
FROM space_members AS m
JOIN audio_records AS r ON r.space_id = m.space_id
WHERE m.user_id = :user_id
  AND r.created_at >= coalesce((
      SELECT c.created_at FROM audio_records AS c
      WHERE c.space_id = m.space_id{after_c}
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT 1 OFFSET :limit - 1), ''){after}"""


def visible_page(space_branch: str, *, after: bool) -> str:
    """The one statement of a page of what a person may see (`space_branch`: the
    engine's text of a space's newest keys, with `{after}` and, where it reads a
    second range, `{after_c}` slots: the cursor on `r` and on `c`)."""
    cursor = PAGE_AFTER_CONDITION if after else ""
    return f"""
WITH branches AS (
    SELECT created_at, id FROM (
        SELECT r.created_at, r.id FROM audio_records AS r
        WHERE r.owner_id = :user_id{cursor}
        ORDER BY r.created_at DESC, r.id DESC LIMIT :limit) AS own
    UNION
    SELECT created_at, id FROM (
        SELECT r.created_at, r.id FROM record_shares AS s
        JOIN audio_records AS r ON r.id = s.record_id
        WHERE s.user_id = :user_id{cursor}
        ORDER BY r.created_at DESC, r.id DESC LIMIT :limit) AS shared
    UNION
    {space_branch.strip().format(after=cursor, after_c=cursor.replace("r.", "c."))}
),
page AS (
    SELECT id FROM branches ORDER BY created_at DESC, id DESC LIMIT :limit
)
SELECT {RECORD_COLUMNS}
FROM page
JOIN audio_records AS r ON r.id = page.id
ORDER BY r.created_at DESC, r.id DESC
"""


VISIBLE_PAGE_FIRST = visible_page(_SPACE_BRANCH, after=False)
VISIBLE_PAGE_AFTER = visible_page(_SPACE_BRANCH, after=True)

# Whose records a person's search reads: their own, their spaces' members', and the
# owners of what is shared with them (each owner's words are keyed apart:
# transcriber.db.search).
VISIBLE_OWNERS = """
SELECT :user_id AS owner_id
UNION
SELECT o.user_id AS owner_id
FROM space_members AS m JOIN space_members AS o ON o.space_id = m.space_id
WHERE m.user_id = :user_id
UNION
SELECT r.owner_id
FROM record_shares AS s JOIN audio_records AS r ON r.id = s.record_id
WHERE s.user_id = :user_id
"""

# -- search among what a person may see ---------------------------------------------------

# `:match` holds the terms of every owner VISIBLE_OWNERS names; the filter keeps
# exactly the records the person may see (the keys only make the match cheap).
VISIBLE_FILTER = """(r.owner_id = :user_id
       OR r.space_id IN (SELECT m.space_id FROM space_members AS m WHERE m.user_id = :user_id)
       OR r.id IN (SELECT s.record_id FROM record_shares AS s WHERE s.user_id = :user_id))"""
SHARED_FILTER = """EXISTS (SELECT 1 FROM record_shares AS s
                  WHERE s.record_id = r.id AND s.user_id = :user_id)"""
SPACE_FILTER = "r.space_id = :space_id"
_AFTER = """
  AND (hits.score > :after_score OR (hits.score = :after_score AND r.id < :after_id))"""


def _search(condition: str, *, after: bool) -> str:
    return f"""{_SEARCH_HITS}
SELECT {RECORD_COLUMNS}, hits.score AS score
{_SEARCH_FROM}
WHERE {condition}{_AFTER if after else ""}
ORDER BY hits.score, r.id DESC
LIMIT :limit
"""


SEARCH_VISIBLE_FIRST = _search(VISIBLE_FILTER, after=False)
SEARCH_VISIBLE_AFTER = _search(VISIBLE_FILTER, after=True)
SEARCH_SHARED_FIRST = _search(SHARED_FILTER, after=False)
SEARCH_SHARED_AFTER = _search(SHARED_FILTER, after=True)
SEARCH_SPACE_FIRST = _search(SPACE_FILTER, after=False)
SEARCH_SPACE_AFTER = _search(SPACE_FILTER, after=True)
