-- Spaces and shares (issue 41, docs/sharing.md): a record has its owner and may
-- be in one space, whose members see it by their role; a record may also be
-- shared with one person. Every existing record stays owner-only: `space_id`
-- starts NULL and no share exists, so nothing changes for anyone until they share.
CREATE TABLE spaces (
    id         TEXT PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE space_members (
    space_id   TEXT NOT NULL REFERENCES spaces (id),
    user_id    TEXT NOT NULL REFERENCES users (id),
    role       TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (space_id, user_id)
);
-- A person's spaces (the list's and the search's branches, the access grant).
CREATE INDEX idx_space_members_user ON space_members (user_id, space_id);

ALTER TABLE audio_records ADD COLUMN space_id TEXT REFERENCES spaces (id);
-- A space's page, newest first (the list's space branch): one range scan per space.
CREATE INDEX idx_audio_records_space_page ON audio_records (space_id, created_at, id)
    WHERE space_id IS NOT NULL;

CREATE TABLE record_shares (
    record_id  TEXT NOT NULL REFERENCES audio_records (id),
    user_id    TEXT NOT NULL REFERENCES users (id),
    role       TEXT NOT NULL CHECK (role IN ('viewer', 'editor')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (record_id, user_id)
);
-- What is shared with a person (the list's shared branch).
CREATE INDEX idx_record_shares_user ON record_shares (user_id, record_id);

-- The space a person's uploads go to when they name none (NULL: their own only).
ALTER TABLE users ADD COLUMN default_space_id TEXT REFERENCES spaces (id);

-- Who did a change in the journal (NULL: the pipeline, or before this version).
ALTER TABLE record_events ADD COLUMN actor_id TEXT;
