-- A space's webhooks (issue 41, docs/api.md "Webhooks"): a webhook with a `space_id`
-- belongs to that space, not to a person. Its space's admins register, list and
-- delete it; every event of a record in the space is delivered to it, with the
-- record as any member of the space sees it. `owner_id` keeps who registered it
-- (the fair share of the delivery actor counts by it). NULL: a person's own webhook,
-- as before this version, so nothing changes for an existing webhook.
ALTER TABLE webhooks ADD COLUMN space_id TEXT REFERENCES spaces (id);
-- A space's webhooks (the list, and the events of a record in the space).
CREATE INDEX idx_webhooks_space ON webhooks (space_id, created_at, id)
    WHERE space_id IS NOT NULL;
