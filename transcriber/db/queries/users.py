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

# A new user unless the login or the e-mail is taken (no row then, and no error: a
# failed statement would abort the whole transaction on PostgreSQL).
INSERT_NEW = """
INSERT OR IGNORE INTO users (id, provider_login, name, email, created_at, updated_at)
VALUES (:id, :login, :name, :email, :now, :now)
"""
