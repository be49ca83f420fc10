-- Personal access tokens (docs/api.md, "Tokens"; transcriber/tokens.py).
--
-- Only the SHA-256 of a token is kept (`token_hash`): the database never holds
-- a usable token. A request finds its token by that hash (the UNIQUE index);
-- a person's list reads their own rows by `user_id`. A revoked token's row is
-- deleted: it answers 401 like any unknown token. `last_used_at` is written
-- at most once a minute per token (`TouchToken`), not on every request.
-- The table grows with people and their tokens, not with the archive.
CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL DEFAULT '' CHECK (length(name) <= 100),
    scope        TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    token_hash   TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    last_used_at TEXT
) STRICT;

CREATE INDEX idx_api_tokens_user ON api_tokens (user_id, created_at);
