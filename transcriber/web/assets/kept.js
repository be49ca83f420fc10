// @ts-check
// What the recorder keeps in this browser (IndexedDB), and how it reaches the
// server: tus 1.0 at /app/uploads/ (docs/api.md, "Resumable uploads"), the
// length deferred while the recording goes on. Each chunk MediaRecorder hands
// over is written here first, so a closed tab, a lost network or a dead
// battery loses at most the last chunk; `send` then uploads whatever the
// server does not hold yet, from the offset the server says it stored.

import { CLIENT_HEADERS, errorFrom } from "./api.js";

const DB_NAME = "transcriber-recorder";
const TUS = { "Tus-Resumable": "1.0.0", ...CLIENT_HEADERS };

/**
 * One recording kept in this browser.
 * @typedef {object} Kept
 * @property {string} id
 * @property {string} name  the file name the record gets
 * @property {string} mime
 * @property {number} started  ms since the epoch
 * @property {number} chunks  how many chunks are stored
 * @property {number} bytes  their total size
 * @property {number} sentChunks  chunks the server holds whole
 * @property {number} sentBytes  their total size
 * @property {string} url  the upload's location ("" before it is created)
 * @property {boolean} stopped  the recording ended: its length is known
 * @property {string} recordId  the record it became ("" until then)
 */

/** @type {Promise<IDBDatabase> | null} */
let opened = null;

/** @returns {Promise<IDBDatabase>} */
function db() {
  opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore("recordings", { keyPath: "id" });
      request.result.createObjectStore("chunks", { keyPath: ["rec", "seq"] });
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  return opened;
}

/**
 * @template T
 * @param {IDBRequest<T>} request
 * @returns {Promise<T>}
 */
function done(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/**
 * @param {"readonly" | "readwrite"} mode
 * @returns {Promise<{recordings: IDBObjectStore, chunks: IDBObjectStore, tx: IDBTransaction}>}
 */
async function stores(mode) {
  const tx = (await db()).transaction(["recordings", "chunks"], mode);
  return { recordings: tx.objectStore("recordings"), chunks: tx.objectStore("chunks"), tx };
}

/** @param {Kept} kept */
export async function save(kept) {
  const { recordings } = await stores("readwrite");
  await done(recordings.put(kept));
}

/**
 * A chunk and the recording's new totals, in one transaction: both or neither.
 * @param {Kept} kept
 * @param {Blob} blob
 */
export async function addChunk(kept, blob) {
  const { recordings, chunks } = await stores("readwrite");
  chunks.put({ rec: kept.id, seq: kept.chunks, blob });
  kept.chunks += 1;
  kept.bytes += blob.size;
  await done(recordings.put(kept));
}

/** @returns {Promise<Kept[]>} recordings not yet a record */
export async function unfinished() {
  const { recordings } = await stores("readonly");
  /** @type {Kept[]} */
  const all = await done(recordings.getAll());
  return all.filter((kept) => !kept.recordId);
}

/** @param {Kept} kept */
export async function forget(kept) {
  const { recordings, chunks } = await stores("readwrite");
  chunks.delete(IDBKeyRange.bound([kept.id, 0], [kept.id, Infinity]));
  await done(recordings.delete(kept.id));
}

/**
 * The chunks `first` to `end` (not included), as one Blob (a Blob of Blobs copies
 * nothing).
 * @param {Kept} kept
 * @param {number} first
 * @param {number} end
 */
async function chunksBetween(kept, first, end) {
  const { chunks } = await stores("readonly");
  if (end <= first) return new Blob([], { type: kept.mime });
  /** @type {{blob: Blob}[]} */
  const rows = await done(chunks.getAll(IDBKeyRange.bound([kept.id, first], [kept.id, end - 1])));
  return new Blob(rows.map((row) => row.blob), { type: kept.mime });
}

/**
 * @param {string} method
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {Blob} [body]
 */
async function call(method, url, headers, body) {
  const response = await fetch(url, { method, headers: { ...TUS, ...headers }, body,
    credentials: "same-origin" });
  if (!response.ok && response.status !== 409) {
    const error = errorFrom(response.status, await response.text(),
      response.headers.get("Retry-After"));
    throw Object.assign(error, { gone: response.status === 404 || response.status === 410 });
  }
  return response;
}

/**
 * Send what the server does not hold yet; with the recording stopped, name its
 * length, so the last answer carries the record's id. Throws on a network
 * failure (the caller tries again later: nothing is lost, it is all kept here).
 * @param {Kept} kept
 * @param {(sent: number, total: number) => void} [progress]
 * @returns {Promise<Kept>}
 */
export async function send(kept, progress) {
  if (!kept.url) {
    const created = await call("POST", "/app/uploads/", {
      "Upload-Defer-Length": "1",
      "Upload-Metadata": `filename ${base64(kept.name)}`,
    });
    kept.url = created.headers.get("Location") ?? "";
    kept.sentChunks = 0;
    kept.sentBytes = 0;
    await save(kept);
  }
  let offset;
  try {
    offset = Number((await call("HEAD", kept.url, {})).headers.get("Upload-Offset"));
  } catch (error) {
    if (!error.gone) throw error;
    // The server forgot it (expired): everything is still here, so start again.
    kept.url = "";
    await save(kept);
    return send(kept, progress);
  }
  // What is stored now; chunks recorded meanwhile go with the next call.
  const chunks = kept.chunks;
  const bytes = kept.bytes;
  const pending = (await chunksBetween(kept, kept.sentChunks, chunks))
    .slice(offset - kept.sentBytes);
  /** @type {Record<string, string>} */
  const headers = { "Upload-Offset": String(offset),
    "Content-Type": "application/offset+octet-stream" };
  const stopped = kept.stopped;
  if (stopped) headers["Upload-Length"] = String(bytes);
  if (pending.size === 0 && !stopped) return kept;
  const answer = await call("PATCH", kept.url, headers, pending);
  if (answer.status === 409) return kept; // another tab sends it; ask again next time
  kept.sentChunks = chunks;
  kept.sentBytes = bytes;
  kept.recordId = answer.headers.get("X-Record-Id") ?? "";
  if (progress) progress(kept.sentBytes, bytes);
  if (kept.recordId) await forget(kept);
  else await save(kept);
  return kept;
}

/**
 * The text heard so far of a recording being sent (a preview while it records:
 * GET <upload>/text), or null where there is none to show: the upload not made
 * yet, the server away, or a server that offers no preview.
 * @param {Kept} kept
 * @returns {Promise<string | null>}
 */
export async function textSoFar(kept) {
  if (!kept.url) return null;
  const response = await fetch(`${kept.url}/text`, { headers: CLIENT_HEADERS,
    credentials: "same-origin" });
  if (!response.ok) return null;
  const body = await response.json();
  return body.available ? body.text : null;
}

/** @param {string} text */
function base64(text) {
  const bytes = new TextEncoder().encode(text);
  return btoa(String.fromCharCode(...bytes));
}
