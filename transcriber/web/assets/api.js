// @ts-check
// The archive API (`/app/`, docs/api.md). Every failure becomes an ApiError
// carrying the server's `{"error": {"code", "message"}}`, or a code of our own
// when no such answer arrived (network, not JSON). Codes stay English; the
// messages the server words are shown as it words them.

import { t } from "./i18n.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */
/** @typedef {import("./types.js").RecordSummary} RecordSummary */
/** @typedef {import("./types.js").Match} Match */
/** @typedef {import("./types.js").SearchResult} SearchResult */
/** @typedef {import("./types.js").Space} Space */
/** @typedef {{items: SearchResult[], next_cursor: string | null}} RecordPage */
/** @typedef {AbortSignal | undefined} Signal */

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0 when no answer came
   * @param {string} code
   * @param {string} message
   * @param {number | null} [retryAfterSeconds]
   */
  constructor(status, code, message, retryAfterSeconds = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

const RECORDS = "/app/audiorecords";

/** @param {string} id */
export function recordPath(id) {
  return `${RECORDS}/${encodeURIComponent(id)}`;
}

/**
 * @param {string} id
 * @param {"original" | "normalized"} copy
 */
export function fileUrl(id, copy) {
  return `${recordPath(id)}/file?copy=${encodeURIComponent(copy)}`;
}

/**
 * @param {string} id
 * @param {string} format
 */
export function transcriptUrl(id, format) {
  return `${recordPath(id)}/transcript?format=${encodeURIComponent(format)}`;
}

/** @param {string | null} value */
function retryAfter(value) {
  const seconds = Number.parseInt(value || "", 10);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}

/**
 * The error of a non-2xx answer, from its JSON body when it has one.
 * @param {number} status
 * @param {string} bodyText
 * @param {string | null} retryAfterHeader
 */
export function errorFrom(status, bodyText, retryAfterHeader) {
  let code = "http_" + status;
  let message = t("error.status", { status });
  try {
    const body = JSON.parse(bodyText);
    if (body && body.error && typeof body.error.message === "string") {
      code = String(body.error.code || code);
      message = body.error.message;
    }
  } catch {
    // Not JSON (a proxy's page): keep the generic message.
  }
  return new ApiError(status, code, message, retryAfter(retryAfterHeader));
}

// Sent on every API call: a custom header needs a CORS preflight that the
// server never grants, so another site's page cannot send it (the server's
// same-origin rule accepts it as proof the request is ours).
export const CLIENT_HEADERS = { "X-Transcriber-Client": "web" };

/**
 * @param {string} method
 * @param {string} path
 * @param {Signal} [signal]
 * @param {unknown} [body]
 * @returns {Promise<any>} the answer's JSON (null for 204), as the caller's JSDoc says
 */
async function request(method, path, signal, body = undefined) {
  let response;
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json", ...CLIENT_HEADERS };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  try {
    response = await fetch(path, {
      method, signal, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "network", t("error.network"));
  }
  const text = await response.text();
  if (!response.ok) throw errorFrom(response.status, text, response.headers.get("Retry-After"));
  if (response.status === 204) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(response.status, "bad_answer", t("error.bad_answer"));
  }
}

/**
 * @param {Signal} [signal]
 * @returns {Promise<{id: string, login: string, name: string, email: string}>}
 */
export function me(signal) {
  return request("GET", "/app/me", signal);
}

/**
 * One page: {items, next_cursor}. `q` searches; `cursor` continues; `scope` is
 * `mine`, `shared` or `space:<id>` (empty: everything the user may see).
 * @param {{q?: string, topic?: string, cursor?: string | null, limit?: number | null,
 *   scope?: string}} query
 * @param {Signal} [signal]
 * @returns {Promise<RecordPage>}
 */
export function listRecords({ q = "", topic = "", cursor = null, limit = null, scope = "" } = {},
  signal) {
  const params = new URLSearchParams();
  if (limit) params.set("limit", String(limit));
  if (scope) params.set("scope", scope);
  if (q) params.set("q", q);
  else if (topic) params.set("topic", topic);
  if (cursor) params.set("cursor", cursor);
  const query = params.toString();
  return request("GET", query ? `${RECORDS}?${query}` : RECORDS, signal);
}

/**
 * The spaces the user is a member of, with their role: {items}.
 * @param {Signal} [signal]
 * @returns {Promise<{items: Space[]}>}
 */
export function spaces(signal) {
  return request("GET", "/app/spaces", signal);
}

/**
 * @param {string} id
 * @param {Signal} [signal]
 * @returns {Promise<RecordCard>}
 */
export function card(id, signal) {
  return request("GET", recordPath(id), signal);
}

/**
 * Every utterance of the record's current transcript holding `q`'s words, in
 * time order: {matches: [{utterance_index, start_ms, end_ms, speaker, snippet,
 * marks}]} (the card's find box).
 * @param {string} id
 * @param {string} q
 * @param {Signal} [signal]
 * @returns {Promise<{matches: Match[], partial: boolean}>}
 */
export function findInTranscript(id, q, signal) {
  const params = new URLSearchParams({ q });
  return request("GET", `${recordPath(id)}/matches?${params}`, signal);
}

/** @param {string} id */
export function resume(id) {
  return request("POST", `${recordPath(id)}/resume`);
}

/**
 * Any of {title, brief, topics}; answers the updated card.
 * @param {string} id
 * `space` (the owner): the space's id to move the record into, null to take it out.
 * @param {{title?: string, brief?: string, topics?: string[], speakers?: Record<string, string>,
 *   space?: string | null}} fields
 * @returns {Promise<RecordCard>}
 */
export function editRecord(id, fields) {
  return request("PATCH", recordPath(id), undefined, fields);
}

/**
 * Corrections [{index, text}] made on `revision`; 409 `conflict` when it moved on.
 * @param {string} id
 * @param {number} revision
 * @param {{index: number, text?: string, speaker?: string}[]} utterances
 * @returns {Promise<RecordCard>}
 */
export function correctTranscript(id, revision, utterances) {
  return request("PATCH", `${recordPath(id)}/transcript`, undefined, { revision, utterances });
}

/**
 * @param {string} id
 * @param {string} [language]
 * @returns {Promise<RecordCard>}
 */
export function retranscribe(id, language) {
  return request("POST", `${recordPath(id)}/retranscribe`, undefined,
    language ? { language } : {});
}

/** @param {string} id */
export function deleteRecord(id) {
  return request("DELETE", recordPath(id));
}

/**
 * The suggestion of `label` confirmed (it becomes the name) or rejected; the card.
 * @param {string} id
 * @param {string} label
 * @param {string} profileId
 * @returns {Promise<RecordCard>}
 */
export function confirmVoice(id, label, profileId) {
  return request("POST", `${recordPath(id)}/speakers/${encodeURIComponent(label)}/confirm`,
    undefined, { profile_id: profileId });
}

/**
 * @param {string} id
 * @param {string} label
 * @param {string} profileId
 * @returns {Promise<RecordCard>}
 */
export function rejectVoice(id, label, profileId) {
  return request("POST", `${recordPath(id)}/speakers/${encodeURIComponent(label)}/reject`,
    undefined, { profile_id: profileId });
}

/**
 * The names and terms the recognizer is told: {terms, voice_names}.
 * @param {Signal} [signal]
 * @returns {Promise<import("./types.js").Vocabulary>}
 */
export function vocabulary(signal) {
  return request("GET", "/app/vocabulary", signal);
}

/**
 * Replace the user's terms; answers the vocabulary as kept.
 * @param {string[]} terms
 * @returns {Promise<import("./types.js").Vocabulary>}
 */
export function putVocabulary(terms) {
  return request("PUT", "/app/vocabulary", undefined, { terms });
}

/**
 * A space's names and terms, told for every record in it: {terms} (any member).
 * @param {string} id
 * @param {Signal} [signal]
 * @returns {Promise<import("./types.js").SpaceVocabulary>}
 */
export function spaceVocabulary(id, signal) {
  return request("GET", `/app/spaces/${encodeURIComponent(id)}/vocabulary`, signal);
}

/**
 * Replace a space's terms (its editors and admins); answers them as kept.
 * @param {string} id
 * @param {string[]} terms
 * @returns {Promise<import("./types.js").SpaceVocabulary>}
 */
export function putSpaceVocabulary(id, terms) {
  return request("PUT", `/app/spaces/${encodeURIComponent(id)}/vocabulary`, undefined,
    { terms });
}

const VOICES = "/app/voices";

/** @param {string} id */
function voicePath(id) {
  return `${VOICES}/${encodeURIComponent(id)}`;
}

/**
 * The user's known voices: {items: [{id, name, records, talk_ms, updated_at}]}.
 * @param {Signal} [signal]
 * @returns {Promise<{items: import("./types.js").Voice[]}>}
 */
export function voices(signal) {
  return request("GET", VOICES, signal);
}

/**
 * @param {string} id
 * @param {string} name
 */
export function renameVoice(id, name) {
  return request("PATCH", voicePath(id), undefined, { name });
}

/**
 * @param {string} id
 * @param {string} into
 */
export function mergeVoice(id, into) {
  return request("POST", `${voicePath(id)}/merge`, undefined, { into });
}

/** @param {string} id */
export function deleteVoice(id) {
  return request("DELETE", voicePath(id));
}

/**
 * The signed-in person's tokens: {items: [{id, name, scope, created_at, …}]}.
 * @param {Signal} [signal]
 * @returns {Promise<{items: import("./types.js").Token[]}>}
 */
export function listTokens(signal) {
  return request("GET", "/app/tokens", signal);
}

/**
 * {name, scope, expires_days}; the answer carries `token`, shown this once.
 * @param {{name: string, scope: string, expires_days: number | null}} fields
 * @returns {Promise<import("./types.js").Token & {token: string}>}
 */
export function createToken(fields) {
  return request("POST", "/app/tokens", undefined, fields);
}

/** @param {string} id */
export function revokeToken(id) {
  return request("DELETE", `/app/tokens/${encodeURIComponent(id)}`);
}

/** @param {string} id */
function linksPath(id) {
  return `${recordPath(id)}/links`;
}

/**
 * A record's links for people outside: {items: [{id, expires_at, views, …}]}.
 * @param {string} id
 * @param {Signal} [signal]
 * @returns {Promise<{items: import("./types.js").Link[]}>}
 */
export function listLinks(id, signal) {
  return request("GET", linksPath(id), signal);
}

/**
 * {expires_in_days, audio}; the answer carries `url`, shown this once.
 * @param {string} id
 * @param {{expires_in_days: number, audio: boolean}} fields
 * @returns {Promise<import("./types.js").Link & {url: string}>}
 */
export function createLink(id, fields) {
  return request("POST", linksPath(id), undefined, fields);
}

/**
 * @param {string} id
 * @param {string} linkId
 */
export function revokeLink(id, linkId) {
  return request("DELETE", `${linksPath(id)}/${encodeURIComponent(linkId)}`);
}

/**
 * The people a record is shared with directly: {items: [{login, role, created_at}]}.
 * @param {string} id
 * @param {Signal} [signal]
 * @returns {Promise<{items: import("./types.js").Share[]}>}
 */
export function listShares(id, signal) {
  return request("GET", `${recordPath(id)}/shares`, signal);
}

/**
 * Share the record with a login as `viewer` or `editor` (again: change the role).
 * @param {string} id
 * @param {{login: string, role: "viewer" | "editor"}} fields
 * @returns {Promise<import("./types.js").Share>}
 */
export function shareRecord(id, fields) {
  return request("POST", `${recordPath(id)}/shares`, undefined, fields);
}

/**
 * @param {string} id
 * @param {string} login
 */
export function unshareRecord(id, login) {
  return request("DELETE", `${recordPath(id)}/shares/${encodeURIComponent(login)}`);
}

/**
 * @param {Signal} [signal]
 * @returns {Promise<{items: {name: string, records: number}[], next_cursor: string | null}>}
 */
export function topics(signal) {
  return request("GET", "/app/topics", signal);
}

const WEBHOOKS = "/app/webhooks";

/**
 * @param {Signal} [signal]
 * @returns {Promise<{items: import("./types.js").Webhook[]}>}
 */
export function webhooks(signal) {
  return request("GET", WEBHOOKS, signal);
}

/**
 * {url, events, secret?}; answers the webhook with its secret (shown once).
 * @param {{url: string, events: string[], secret?: string}} fields
 * @returns {Promise<import("./types.js").Webhook & {secret: string}>}
 */
export function createWebhook(fields) {
  return request("POST", WEBHOOKS, undefined, fields);
}

/** @param {string} id */
export function deleteWebhook(id) {
  return request("DELETE", `${WEBHOOKS}/${encodeURIComponent(id)}`);
}

/**
 * @param {string} id
 * @param {Signal} [signal]
 * @returns {Promise<{items: import("./types.js").WebhookDelivery[]}>}
 */
export function webhookDeliveries(id, signal) {
  return request("GET", `${WEBHOOKS}/${encodeURIComponent(id)}/deliveries`, signal);
}

/**
 * Upload one file as multipart/form-data (field `file`) with progress.
 * Returns {promise, abort}; `onProgress(sent, total)` follows the upload.
 * XHR, not fetch: fetch cannot report upload progress.
 * @param {File} file
 * @param {(sent: number, total: number) => void} onProgress
 * @param {string} [language]
 * @param {string | null} [space] a space's id; "" the user's own; null their default
 * @returns {{promise: Promise<RecordSummary>, abort: () => void}}
 */
export function upload(file, onProgress, language = "", space = null) {
  const xhr = new XMLHttpRequest();
  const promise = new Promise((resolve, reject) => {
    xhr.open("POST", RECORDS);
    xhr.setRequestHeader("Accept", "application/json");
    for (const [name, value] of Object.entries(CLIENT_HEADERS)) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded, event.total);
    });
    xhr.addEventListener("load", () => {
      if (xhr.status === 201) {
        try {
          resolve(JSON.parse(xhr.responseText));
        } catch {
          reject(new ApiError(xhr.status, "bad_answer", t("error.bad_answer")));
        }
      } else {
        reject(errorFrom(xhr.status, xhr.responseText, xhr.getResponseHeader("Retry-After")));
      }
    });
    xhr.addEventListener("error", () => {
      // The server may cut a too-large body off before the browser sees its answer.
      reject(new ApiError(0, "network", t("error.upload_interrupted")));
    });
    xhr.addEventListener("abort", () => {
      reject(new ApiError(0, "aborted", t("error.upload_cancelled")));
    });
    const form = new FormData();
    // Before the file: the server reads the form as a stream.
    if (language) form.append("language", language);
    // "" files it as the user's own; null leaves it to their default space.
    if (space !== null) form.append("space", space);
    form.append("file", file, file.name);
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}

/**
 * @typedef {object} AskLine
 * @property {number} utterance_index
 * @property {number} start_ms
 * @property {number} end_ms
 * @property {string | null} speaker
 * @property {string} text
 */
/**
 * @typedef {object} AskPassage
 * @property {number} number
 * @property {string} record_id
 * @property {string} title
 * @property {string} created_at
 * @property {AskLine[]} lines
 * @property {number} best
 * @property {number[]} mark
 */
/**
 * @typedef {object} AskCitation
 * @property {string} record_id
 * @property {number} utterance_index
 * @property {number} start_ms
 * @property {number} end_ms
 * @property {string | null} speaker
 * @property {string} quote
 * @property {number} passage
 */
/**
 * @typedef {object} AskAnswer
 * @property {string | null} answer
 * @property {AskPassage[]} passages
 * @property {AskCitation[]} citations
 * @property {string | null} conversation
 * @property {number} unchecked
 * @property {string} language
 */

/**
 * @typedef {object} ConversationSummary
 * @property {string} id
 * @property {string} created_at
 * @property {string} updated_at
 * @property {string | null} first_question
 * @property {number} turns
 */
/**
 * @typedef {object} ConversationTurn
 * @property {string} question
 * @property {string | null} answer
 * @property {AskCitation[]} citations
 * @property {string} asked_at
 */

/**
 * The person's conversations, the latest used first: {items, next_cursor}.
 * @param {string | null} cursor
 * @param {Signal} [signal]
 * @returns {Promise<{items: ConversationSummary[], next_cursor: string | null}>}
 */
export function listConversations(cursor, signal) {
  const params = new URLSearchParams({ limit: "20" });
  if (cursor) params.set("cursor", cursor);
  return request("GET", `/app/ask/conversations?${params}`, signal);
}

/**
 * @param {string} id
 * @param {Signal} [signal]
 * @returns {Promise<{id: string, created_at: string, turns: ConversationTurn[]}>}
 */
export function getConversation(id, signal) {
  return request("GET", `/app/ask/conversations/${encodeURIComponent(id)}`, signal);
}

/** @param {string} id */
export function deleteConversation(id) {
  return request("DELETE", `/app/ask/conversations/${encodeURIComponent(id)}`);
}

/**
 * `POST /app/ask`. Asks for server-sent events: with a language model the passages
 * come first (`onPassages`), then the model's text as it writes it (`onText`, each
 * piece unchecked), then the checked answer, which replaces that text; offline the
 * answer is JSON.
 * @param {{question: string, conversation: string | null, records: string[]}} body
 * @param {Signal} signal
 * @param {(passages: AskPassage[]) => void} onPassages
 * @param {(text: string) => void} [onText]
 * @returns {Promise<AskAnswer>}
 */
export async function ask(body, signal, onPassages, onText) {
  let response;
  try {
    response = await fetch("/app/ask", {
      method: "POST", signal, credentials: "same-origin",
      headers: { Accept: "text/event-stream, application/json",
        "Content-Type": "application/json", ...CLIENT_HEADERS },
      body: JSON.stringify({ question: body.question,
        ...(body.conversation ? { conversation: body.conversation } : {}),
        ...(body.records.length ? { scope: { records: body.records } } : {}) }),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "network", t("error.network"));
  }
  if (!response.ok) {
    throw errorFrom(response.status, await response.text(), response.headers.get("Retry-After"));
  }
  const type = response.headers.get("Content-Type") || "";
  if (!type.startsWith("text/event-stream") || !response.body) {
    return JSON.parse(await response.text());
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data === undefined) continue;
      if (name === "passages") onPassages(JSON.parse(data));
      if (name === "delta" && onText) onText(JSON.parse(data).text);
      if (name === "answer") return JSON.parse(data);
    }
  }
  throw new ApiError(0, "bad_answer", t("error.bad_answer"));
}
