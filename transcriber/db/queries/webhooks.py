"""Webhooks and their deliveries (migrations/0014_webhooks.sql).

A person's webhooks are few (`webhooks.per_user_max`) and found by
`idx_webhooks_owner`; a space's (`space_id`, migrations/0026_space_webhooks.sql) as
few, found by `idx_webhooks_space`; a person's own are those without a space.
Deliveries are found by the partial index of the pending ones (the queue) or by their
webhook's latest.
"""

# --- a person's webhooks ---------------------------------------------------------

INSERT_WEBHOOK = """
INSERT INTO webhooks (id, owner_id, url, secret, events, created_at, space_id)
VALUES (:id, :owner_id, :url, :secret, :events, :now, :space_id)
"""

COUNT_OF_OWNER = """
SELECT count(*) AS n FROM webhooks WHERE owner_id = :owner_id AND space_id IS NULL
"""

WEBHOOKS_OF_OWNER = """
SELECT id, url, events, created_at, disabled_at, disabled_reason, failures, last_error,
       paused_until
FROM webhooks WHERE owner_id = :owner_id AND space_id IS NULL
ORDER BY created_at, id
"""

WEBHOOK_OF_OWNER = """
SELECT id, url, events, created_at, disabled_at, disabled_reason, failures, last_error,
       paused_until
FROM webhooks WHERE id = :id AND owner_id = :owner_id AND space_id IS NULL
"""

# Its deliveries go with it (ON DELETE CASCADE): a pending one is never sent.
DELETE_WEBHOOK = """
DELETE FROM webhooks WHERE id = :id AND owner_id = :owner_id AND space_id IS NULL
"""

# --- a space's webhooks (its admins') --------------------------------------------------

COUNT_OF_SPACE = """
SELECT count(*) AS n FROM webhooks WHERE space_id = :space_id
"""

WEBHOOKS_OF_SPACE = """
SELECT id, url, events, created_at, disabled_at, disabled_reason, failures, last_error,
       paused_until
FROM webhooks WHERE space_id = :space_id
ORDER BY created_at, id
"""

WEBHOOK_OF_SPACE = """
SELECT id, url, events, created_at, disabled_at, disabled_reason, failures, last_error,
       paused_until
FROM webhooks WHERE id = :id AND space_id = :space_id
"""

DELETE_SPACE_WEBHOOK = """
DELETE FROM webhooks WHERE id = :id AND space_id = :space_id
"""

# --- events: written inside the transaction of the event ---------------------------

# The live webhooks that take `event`: the owner's own, and those of the space the
# record is in now (usually none: then nothing more runs). Two branches, each on its
# index (the owner's, the space's), never one OR over the table.
SUBSCRIBED = """
SELECT w.id, w.created_at FROM webhooks AS w
WHERE w.owner_id = (SELECT r.owner_id FROM audio_records AS r WHERE r.id = :record_id)
  AND w.space_id IS NULL AND w.disabled_at IS NULL
  AND EXISTS (SELECT 1 FROM json_each(w.events) AS e WHERE e.value = :event)
UNION ALL
SELECT w.id, w.created_at FROM webhooks AS w
WHERE w.space_id = (SELECT r.space_id FROM audio_records AS r WHERE r.id = :record_id)
  AND w.disabled_at IS NULL
  AND EXISTS (SELECT 1 FROM json_each(w.events) AS e WHERE e.value = :event)
ORDER BY created_at, id
"""

# What is known of the record when the event is written, in the shape of a list
# item (`Record` in the OpenAPI document): a deletion's delivery sends it, and
# so does any delivery whose record is gone by its first try. The halt's
# message is not kept (the API's is a cleaned copy of the error text).
RECORD_SNAPSHOT = """
SELECT json_object(
    'id', r.id, 'title', r.title, 'original_filename', r.original_filename,
    'source', r.source, 'stage', r.state,
    'halt', CASE WHEN r.halted_at IS NULL THEN NULL
                 ELSE json_object('at', r.halted_at, 'reason', r.halt_reason,
                                  'message', NULL) END,
    'progress', NULL, 'duration_ms', r.duration_ms, 'size_bytes', r.size_bytes,
    'created_at', r.created_at, 'updated_at', r.updated_at, 'brief', r.brief,
    'topics', (SELECT json_group_array(t.name) FROM record_topics AS rt
               JOIN topics AS t ON t.id = rt.topic_id WHERE rt.record_id = r.id),
    'described', json_object(
        'title', r.title_origin, 'brief', r.brief_origin, 'topics', r.topics_origin,
        'by', nullif(r.described_by, ''),
        'state', (SELECT j.state FROM describe_jobs AS j WHERE j.record_id = r.id))
) AS record_json
FROM audio_records AS r WHERE r.id = :record_id
"""

INSERT_DELIVERY = """
INSERT INTO webhook_deliveries (id, webhook_id, event, record_id, record_json,
                                next_attempt_at, created_at)
VALUES (:id, :webhook_id, :event, :record_id, :record_json, :now, :now)
"""

# --- the delivery actor ------------------------------------------------------------

# Deliveries whose time has come, soonest first, with what sending them needs,
# but for those the actor has in flight (`busy_deliveries`), those of webhooks
# whose target host is at its share (`busy_webhooks`) or whose owner is at
# theirs (`busy_owners`): JSON arrays of ids, so one person's queue cannot hide
# another's due delivery behind the limit. A webhook whose target is backed off
# (`paused_until`) has none due. The walk is over the partial index of the
# pending rows (the queue, never the archive).
DUE = """
SELECT d.id, d.webhook_id, d.event, d.record_id, d.record_json, d.body, d.attempts,
       d.created_at, w.owner_id, w.url, w.secret, w.failures, w.space_id
FROM webhook_deliveries AS d JOIN webhooks AS w ON w.id = d.webhook_id
WHERE d.state = 'pending' AND d.next_attempt_at <= :now
  AND (w.paused_until IS NULL OR w.paused_until <= :now)
  AND d.id NOT IN (SELECT bd.value FROM json_each(:busy_deliveries) AS bd)
  AND d.webhook_id NOT IN (SELECT bw.value FROM json_each(:busy_webhooks) AS bw)
  AND w.owner_id NOT IN (SELECT bo.value FROM json_each(:busy_owners) AS bo)
ORDER BY d.next_attempt_at
LIMIT :limit
"""

# The space a record is in now (a space webhook's delivery goes only while it is there).
RECORD_SPACE = """
SELECT r.space_id FROM audio_records AS r WHERE r.id = :record_id
"""

QUEUE_DEPTH = """
SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'
"""

# The body is written before its first try is sent (and kept: coalesce), so
# a try cut by a crash and every later one send the same bytes. No row: the
# delivery is not pending any more (its webhook was deleted).
PIN_BODY = """
UPDATE webhook_deliveries SET body = coalesce(body, :body)
WHERE id = :id AND state = 'pending'
RETURNING body
"""

# One attempt's result. `body` is kept from the first attempt on (coalesce):
# every retry sends the same bytes.
MARK_DELIVERED = """
UPDATE webhook_deliveries
SET state = 'delivered', attempts = attempts + 1, last_status = :status, last_error = NULL,
    body = coalesce(body, :body), finished_at = :now
WHERE id = :id AND state = 'pending'
"""

MARK_RETRY = """
UPDATE webhook_deliveries
SET attempts = attempts + 1, last_status = :status, last_error = :error,
    body = coalesce(body, :body), next_attempt_at = :next_attempt_at
WHERE id = :id AND state = 'pending'
"""

MARK_FAILED = """
UPDATE webhook_deliveries
SET state = 'failed', attempts = attempts + 1, last_status = :status, last_error = :error,
    body = coalesce(body, :body), finished_at = :now
WHERE id = :id AND state = 'pending'
"""

# The target's health after an attempt: it answered (any status), or it did not
# (timeout, connection, name, refused address): then none of the webhook's
# deliveries is tried before `paused_until`.
TARGET_ANSWERED = """
UPDATE webhooks SET failures = 0, last_error = NULL, paused_until = NULL
WHERE id = :id AND (failures <> 0 OR paused_until IS NOT NULL)
"""

TARGET_SILENT = """
UPDATE webhooks SET failures = failures + 1, last_error = :error, paused_until = :paused_until
WHERE id = :id
"""

# A space webhook's delivery whose record left the space before it went: never sent
# (the space's receiver may no longer see the record).
MARK_LEFT_SPACE = """
UPDATE webhook_deliveries
SET state = 'failed', last_error = 'left_space', finished_at = :now
WHERE id = :id AND state = 'pending'
"""

# The receiver answered 410 Gone: the webhook gets nothing more.
DISABLE_WEBHOOK = """
UPDATE webhooks SET disabled_at = :now, disabled_reason = :reason
WHERE id = :id AND disabled_at IS NULL
"""

FAIL_PENDING_OF_WEBHOOK = """
UPDATE webhook_deliveries
SET state = 'failed', last_error = :error, finished_at = :now
WHERE webhook_id = :webhook_id AND state = 'pending'
"""

# A webhook keeps its latest finished deliveries only: those older than the
# `keep`-th newest go (the list shows the last 50). Run when one finishes, so
# at most a few rows go each time.
PRUNE_FINISHED = """
DELETE FROM webhook_deliveries
WHERE webhook_id = :webhook_id AND state <> 'pending'
  AND created_at < (SELECT d.created_at FROM webhook_deliveries AS d
                    WHERE d.webhook_id = :webhook_id
                    ORDER BY d.created_at DESC, d.id DESC LIMIT 1 OFFSET :keep)
"""

# --- what the owner sees --------------------------------------------------------------

LATEST_DELIVERIES = """
SELECT id, event, record_id, state, attempts, next_attempt_at, last_status, last_error,
       created_at, finished_at
FROM webhook_deliveries WHERE webhook_id = :webhook_id
ORDER BY created_at DESC, id DESC
LIMIT :limit
"""
