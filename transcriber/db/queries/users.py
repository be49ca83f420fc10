SELECT_BY_LOGIN = """
SELECT id, provider_login, name, email, created_at FROM users
WHERE provider_login = :login
"""

SELECT_BY_ID = """
SELECT id, provider_login, name, email, created_at FROM users WHERE id = :id
"""

INSERT = """
INSERT INTO users (id, provider_login, name, email, created_at, updated_at)
VALUES (:id, :login, :name, :email, :now, :now)
"""
