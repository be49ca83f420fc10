INSERT = """
INSERT INTO api_tokens (id, user_id, name, scope, token_hash, created_at, expires_at)
VALUES (:id, :user_id, :name, :scope, :token_hash, :now, :expires_at)
"""

# The token a request presents, with its owner: one lookup by the stored hash.
BEARER_BY_HASH = """
SELECT t.id AS token_id, t.token_hash, t.scope, t.expires_at, t.last_used_at,
       u.id, u.provider_login, u.name, u.email, u.created_at
FROM api_tokens t JOIN users u ON u.id = t.user_id
WHERE t.token_hash = :token_hash
"""

_LISTED = """
SELECT t.id, t.name, t.scope, t.created_at, t.expires_at, t.last_used_at,
       u.provider_login
FROM api_tokens t JOIN users u ON u.id = t.user_id
"""

BY_ID = _LISTED + "WHERE t.id = :id\n"

OF_USER = _LISTED + "WHERE t.user_id = :user_id\nORDER BY t.created_at DESC, t.id DESC\n"

# `transcriber token list` without a login: every person's tokens (an operator's
# view; the table holds people's tokens, not the archive).
ALL = _LISTED + "ORDER BY u.provider_login, t.created_at DESC, t.id DESC\n"

COUNT_OF_USER = "SELECT count(*) AS n FROM api_tokens WHERE user_id = :user_id\n"

DELETE = "DELETE FROM api_tokens WHERE id = :id\n"

DELETE_OWNED = "DELETE FROM api_tokens WHERE id = :id AND user_id = :user_id\n"

# At most once per `tokens.TOUCH_SECONDS` per token, whichever process asks.
TOUCH = """
UPDATE api_tokens SET last_used_at = :now
WHERE id = :id AND (last_used_at IS NULL OR last_used_at < :cutoff)
"""
