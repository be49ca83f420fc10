-- A space's vocabulary: migrations/0028_space_vocabularies.sql says what and why.
CREATE TABLE space_vocabularies (
    space_id   TEXT COLLATE "C" PRIMARY KEY NOT NULL REFERENCES spaces (id),
    terms      TEXT NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);
