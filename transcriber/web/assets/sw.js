// @ts-check
// The service worker (docs/webapp.md, "On a phone"): the app shell works offline, and
// "Share → Transcriber" from a phone's recorder or messenger uploads the file.
//
// Served at /sw.js (scope "/") by web/pwa.py, which writes the release's hashed asset
// names into SHELL and their digest into VERSION: a new release is a new worker whose
// install fetches the new shell and whose activation drops the old one.
//
// What it touches, and only that: /assets/ (immutable, hashed: from the cache first),
// page loads (the network first; offline, the cached page: the app's router shows
// the route), and the share target's POST. The API (/app/, /v1/) is never answered
// from here nor kept: its answers are private (`Cache-Control: no-store`).

const VERSION = "dev";
/** @type {string[]} */
const SHELL = [];
const CACHE = `transcriber-shell-${VERSION}`;
// Addresses the page never is (the API, its downloads, the operator's endpoints):
// opened in a tab they go to the server untouched.
const OWN_PATHS = /^\/(app|v1|metrics|healthz|readyz|manifest\.webmanifest|sw\.js)(\/|$)/;
// ServiceWorkerGlobalScope is not in the DOM's types the app is checked with.
const worker = /** @type {any} */ (self);

worker.addEventListener("install", (/** @type {any} */ event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(["/", ...SHELL]))
    .then(() => worker.skipWaiting()));
});

worker.addEventListener("activate", (/** @type {any} */ event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((name) => name.startsWith("transcriber-shell-")
      && name !== CACHE).map((name) => caches.delete(name))))
    .then(() => worker.clients.claim()));
});

worker.addEventListener("fetch", (/** @type {any} */ event) => {
  /** @type {Request} */
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== location.origin) return;
  if (request.method === "POST" && url.pathname === "/share") {
    event.respondWith(shared(request));
  } else if (request.method !== "GET") {
    return;
  } else if (url.pathname.startsWith("/assets/")) {
    event.respondWith(fromCacheFirst(request));
  } else if (request.mode === "navigate" && !OWN_PATHS.test(url.pathname)) {
    event.respondWith(page(request));
  }
});

/** @param {Request} request */
async function fromCacheFirst(request) {
  const kept = await caches.match(request);
  if (kept) return kept;
  const answer = await fetch(request);
  if (answer.ok) {
    const copy = answer.clone();
    caches.open(CACHE).then((cache) => cache.put(request, copy));
  }
  return answer;
}

// The page is the same for every route (the app's router draws it); the newest
// one while online, the one kept when not.
/** @param {Request} request */
async function page(request) {
  try {
    const answer = await fetch(request);
    const html = (answer.headers.get("Content-Type") || "").startsWith("text/html");
    if (answer.ok && html && !noStore(answer)) {
      const copy = answer.clone();
      caches.open(CACHE).then((cache) => cache.put("/", copy));
    }
    return answer;
  } catch (error) {
    const kept = await caches.match("/");
    if (kept) return kept;
    throw error;
  }
}

/** @param {Response} answer */
function noStore(answer) {
  return /(^|,)\s*(no-store|private)\b/i.test(answer.headers.get("Cache-Control") || "");
}

// "Share → Transcriber": the shared file goes through the one upload door, from this
// origin (its Origin and identity checks as for the upload page); the person lands on
// the new record's card, or on the upload page told why not.
/** @param {Request} request */
async function shared(request) {
  try {
    const form = await request.formData();
    const file = form.getAll("file").find((value) => value instanceof File);
    if (!(file instanceof File)) return Response.redirect("/upload?shared=none", 303);
    const body = new FormData();
    body.append("file", file, file.name || "shared-recording");
    const answer = await fetch("/app/audiorecords", { method: "POST", body,
      credentials: "same-origin" });
    if (!answer.ok) return Response.redirect(`/upload?shared=${answer.status}`, 303);
    const record = await answer.json();
    return Response.redirect(`/records/${encodeURIComponent(record.id)}`, 303);
  } catch {
    return Response.redirect("/upload?shared=offline", 303);
  }
}
