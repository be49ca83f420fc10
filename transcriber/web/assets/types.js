// @ts-check
// The API's shapes as the web app reads them (docs/api.md, the OpenAPI
// document at /app/openapi.json): JSDoc types only, for TypeScript's checker
// (`tsconfig.json`, tests/unit/web/test_js_checks.py). No browser loads this
// file: the modules name its types in JSDoc comments (an `import(...)` type),
// which the server's asset table rewrites like any import and the browser
// never follows. A field the JS starts to read is added here, beside its use.

/** @typedef {"uploaded" | "normalized" | "submitted" | "transcribed" | "done"} Stage */

/**
 * @typedef {object} Halt
 * @property {string} at
 * @property {string} reason
 * @property {string | null} message
 */

/**
 * @typedef {object} Progress
 * @property {"queue" | "normalize" | "recognize"} stage
 * @property {number} done
 * @property {number} total
 * @property {number} fraction
 * @property {number | null} eta_seconds
 */

/**
 * @typedef {object} Described
 * @property {"auto" | "human" | null} title
 * @property {"auto" | "human" | null} brief
 * @property {"auto" | "human" | null} topics
 * @property {string | null} by
 * @property {"pending" | "done" | "failed" | null} state
 */

/**
 * @typedef {object} Word
 * @property {number} start_ms
 * @property {number} end_ms
 * @property {string} text
 * @property {number | null} probability
 */

/**
 * @typedef {object} Utterance
 * @property {number} index
 * @property {number} start_ms
 * @property {number} end_ms
 * @property {number} channel
 * @property {string | null} speaker
 * @property {string} text
 * @property {Word[]} [words]
 */

/**
 * @typedef {object} Span
 * @property {number} start_ms
 * @property {number} end_ms
 */

/**
 * @typedef {object} Quality
 * @property {"good" | "check" | "poor"} verdict
 * @property {string[]} reasons
 * @property {number} speech_seconds
 * @property {number} unclear_seconds
 * @property {Span[]} unclear_spans
 * @property {number} repeats_removed
 * @property {number | null} low_confidence_share
 */

/**
 * @typedef {object} Suggestion
 * @property {string} name
 * @property {string} profile_id
 * @property {number} similarity
 */

/**
 * @typedef {object} Speaker
 * @property {string} name
 * @property {number} talk_ms
 * @property {Suggestion | null} suggested
 */

/**
 * @typedef {object} FileCopy
 * @property {number} size_bytes
 * @property {string} format
 * @property {number | null} duration_ms
 */

/**
 * @typedef {object} TimelineEvent
 * @property {string} at
 * @property {"pipeline" | "human"} origin
 * @property {string} step
 * @property {"done" | "failed" | "halted" | "resumed"} outcome
 * @property {number | null} duration_ms
 * @property {string | null} [by]
 */

/**
 * @typedef {object} Match
 * @property {number} utterance_index
 * @property {number} start_ms
 * @property {number} end_ms
 * @property {string | null} speaker
 * @property {string} snippet
 * @property {[number, number][]} marks
 */

/**
 * A row of the record list (`GET /app/audiorecords`).
 * @typedef {object} RecordSummary
 * @property {string} id
 * @property {string} title
 * @property {string} original_filename
 * @property {"http" | "telegram"} source
 * @property {"web" | "api" | "cli" | "folder" | null} [via]
 * @property {Stage} stage
 * @property {Halt | null} halt
 * @property {Progress | null} progress
 * @property {number} duration_ms
 * @property {number} size_bytes
 * @property {string} created_at
 * @property {string} updated_at
 * @property {string} [brief]
 * @property {string[]} [topics]
 * @property {Described} described
 * @property {"good" | "check" | "poor" | null} [quality_verdict]
 * @property {string | null} [space]
 */

/**
 * A space the user is a member of (`GET /app/spaces`).
 * @typedef {object} Space
 * @property {string} id
 * @property {string} name
 * @property {string} created_at
 * @property {"viewer" | "editor" | "admin"} role
 * @property {boolean} [default]
 */

/**
 * A record shared with a person, or a space's member.
 * @typedef {object} Share
 * @property {string} login
 * @property {"viewer" | "editor" | "admin"} role
 * @property {string} created_at
 */

/**
 * A row of a search's answer: the record and where its transcript matched.
 * @typedef {RecordSummary & {matches?: Match[], matches_partial?: boolean}} SearchResult
 */

/**
 * A record's card (`GET /app/audiorecords/{id}`).
 * @typedef {RecordSummary & {
 *   revision: number,
 *   language: {requested: string, detected: string | null},
 *   files: {original: FileCopy | null, normalized: FileCopy | null},
 *   transcript: string | null,
 *   utterances: Utterance[],
 *   speakers: Record<string, Speaker>,
 *   timeline: TimelineEvent[],
 *   quality?: Quality | null,
 *   model?: string | null,
 *   poll_after_ms: number | null,
 *   role?: "owner" | "admin" | "editor" | "viewer" | null,
 *   shares?: Share[] | null,
 * }} RecordCard
 */

/**
 * The names and terms the recognizer is told (`GET /app/vocabulary`).
 * @typedef {object} Vocabulary
 * @property {string[]} terms the user's own
 * @property {string[]} voice_names the user's known voices' names (read only)
 */

/**
 * A space's names and terms (`GET /app/spaces/{id}/vocabulary`).
 * @typedef {object} SpaceVocabulary
 * @property {string[]} terms
 */

/**
 * One of the owner's known voices (`GET /app/voices`).
 * @typedef {object} Voice
 * @property {string} id
 * @property {string} name
 * @property {number} records
 * @property {number} talk_ms
 * @property {string} created_at
 * @property {string} updated_at
 */

/**
 * An API token as listed (never its value but once, at creation).
 * @typedef {object} Token
 * @property {string} id
 * @property {string} name
 * @property {"read" | "write"} scope
 * @property {string} created_at
 * @property {string | null} expires_at
 * @property {string | null} last_used_at
 */

/**
 * A record's link for people outside as listed (never its URL but once, at creation).
 * @typedef {object} Link
 * @property {string} id
 * @property {boolean} audio
 * @property {string} created_at
 * @property {string} expires_at
 * @property {boolean} expired
 * @property {number} views
 * @property {string | null} last_opened_at
 */

/**
 * @typedef {object} WebhookHealth
 * @property {"ok" | "failing"} state
 * @property {string | null} [last_error]
 * @property {string | null} [next_attempt_at]
 */

/**
 * @typedef {object} Webhook
 * @property {string} id
 * @property {string} url
 * @property {string[]} events
 * @property {string} created_at
 * @property {string | null} disabled_at
 * @property {string | null} disabled_reason
 * @property {WebhookHealth | null} [health]
 */

/**
 * @typedef {object} WebhookDelivery
 * @property {string} id
 * @property {string} event
 * @property {string} status
 * @property {string | null} next_attempt_at
 * @property {string} record_id
 * @property {number} attempts
 * @property {number | null} last_status
 * @property {string | null} last_error
 */

// The app's own shapes.

/**
 * What app.js hands each view: a way to go elsewhere without a reload and the
 * page's query. A view returns its cleanup (timers, requests), or nothing.
 * @typedef {object} ViewContext
 * @property {(url: string | URL, options?: {replaceState?: boolean}) => void} navigate
 * @property {URLSearchParams} params
 */

export {};
