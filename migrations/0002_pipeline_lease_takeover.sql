-- 1 when the record's latest claim took it over from a holder whose lease had
-- expired (the holder died or hung), 0 when it was claimed from a released
-- state. Written by the claim itself: the claim is one UPDATE and SQLite's
-- RETURNING sees only new values, so the old lease state is kept here.
ALTER TABLE audio_records ADD COLUMN lease_taken_over INTEGER NOT NULL DEFAULT 0
    CHECK (lease_taken_over IN (0, 1));
