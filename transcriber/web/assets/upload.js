// @ts-check
// Upload: pick files or drop them; each is sent in turn with a progress bar,
// and the API's refusals (413 too large, 415 not audio, …) are shown as the
// server words them. The queue lives beside the view, so leaving the page
// and coming back shows the uploads still running.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { recordName, size } from "./format.js";
import { t } from "./i18n.js";
import { recorderSection } from "./recorder.js";

// The spoken languages offered; `auto` lets the recognizer decide. The
// server checks the code against the recognizer it runs.
export const SPOKEN = ["auto", "en", "ru", "de", "fr", "es", "it", "uk", "kk", "pl", "tr"];

/**
 * @param {string} id
 * @param {string} [selected]
 */
export function spokenSelect(id, selected = "auto") {
  return h("select", { id, name: "language" },
    SPOKEN.map((code) => h("option", { value: code, selected: code === selected },
      t(`spoken.${code}`))));
}

let spoken = "auto";
/** The space chosen for the next files (null: not chosen: the user's default). @type {string | null} */
let space = null;

/**
 * One file on its way: its row's parts, and how to stop it.
 * @typedef {object} Entry
 * @property {File} file
 * @property {HTMLLIElement} row
 * @property {HTMLProgressElement} progress
 * @property {HTMLParagraphElement} state
 * @property {HTMLButtonElement} cancel
 * @property {(() => void) | null} abort
 * @property {boolean} cancelled
 * @property {string} language
 * @property {string | null} space
 */

/** @type {Entry[]} */
const queue = [];
/** @type {HTMLLIElement[]} */
const rows = [];
const live = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
/** @type {Entry | null} */
let running = null;

window.addEventListener("beforeunload", (event) => {
  // Closing the tab would cut an upload off.
  if (running) event.preventDefault();
});

/**
 * @param {Entry} entry
 * @param {"done" | "error"} kind
 * @param {...import("./dom.js").Child} message
 */
function finish(entry, kind, ...message) {
  entry.cancel.remove();
  entry.row.classList.add(`upload-${kind}`);
  if (kind === "error") {
    entry.state.setAttribute("role", "alert");
    entry.progress.remove();
  }
  replace(entry.state, ...message);
}

async function next() {
  if (running) return;
  const entry = queue.shift();
  if (!entry) return;
  if (entry.cancelled) {
    next();
    return;
  }
  running = entry;
  entry.state.textContent = t("upload.uploading");
  live.textContent = t("upload.live_uploading", { name: entry.file.name });
  const { promise, abort } = api.upload(entry.file, (sent, total) => {
    const percent = Math.floor((sent / total) * 100);
    entry.progress.value = percent;
    entry.state.textContent = percent < 100
      ? t("upload.progress", { percent, total: size(total) })
      : t("upload.checking");
  }, entry.language === "auto" ? "" : entry.language, entry.space);
  entry.abort = abort;
  try {
    const record = await promise;
    entry.progress.value = 100;
    finish(entry, "done", t("upload.done"),
      h("a", { href: `/records/${encodeURIComponent(record.id)}` },
        t("upload.open", { name: recordName(record) })));
    live.textContent = t("upload.live_done", { name: entry.file.name });
  } catch (error) {
    // The quota's answer in the reader's language (the server's own words are English).
    const message = error.code === "quota_exceeded" ? t("upload.quota_exceeded") : error.message;
    finish(entry, "error", message);
    live.textContent = t("upload.live_failed", { name: entry.file.name, message });
  } finally {
    running = null;
    next();
  }
}

/**
 * @param {File[]} files
 * @param {HTMLElement} list
 */
function add(files, list) {
  for (const file of files) {
    const progress = h("progress", { max: "100", value: "0",
      "aria-label": t("upload.progress_label", { name: file.name }) });
    const state = h("p", { class: "upload-state" }, t("upload.waiting"));
    const cancel = h("button", { type: "button", class: "button-quiet" }, t("common.cancel"));
    const row = h("li", { class: "upload" },
      h("div", { class: "upload-head" },
        h("span", { class: "upload-name" }, file.name),
        h("span", { class: "muted" }, size(file.size)), cancel),
      progress, state);
    /** @type {Entry} */
    const entry = { file, row, progress, state, cancel, abort: null, cancelled: false,
      language: spoken, space };
    cancel.addEventListener("click", () => {
      entry.cancelled = true;
      if (entry.abort) entry.abort();
      else finish(entry, "error", t("upload.cancelled"));
    });
    rows.unshift(row);
    list.prepend(row);
    queue.push(entry);
  }
  next();
}

/**
 * @param {HTMLElement} main
 * @returns {() => void}
 */
export function renderUpload(main) {
  document.title = t("title.upload");
  const picker = h("input", {
    id: "file-input", type: "file", multiple: true, accept: "audio/*,video/*",
    class: "visually-hidden",
  });
  const zone = h("div", { class: "drop", "data-testid": "drop-zone" },
    h("p", { class: "drop-title" }, t("upload.drop")),
    h("p", {}, t("upload.or")),
    h("label", { for: "file-input", class: "button button-primary" }, t("upload.choose")),
    picker,
    h("p", { class: "muted small" }, t("upload.hint")));
  const languageSelect = spokenSelect("upload-language", spoken);
  languageSelect.addEventListener("change", () => { spoken = languageSelect.value; });
  const languageRow = h("p", { class: "upload-language" },
    h("label", { for: "upload-language" }, t("upload.language")), " ", languageSelect);
  const list = h("ul", { class: "uploads", "aria-label": t("upload.list") }, rows);
  // The space chooser: shown once the user is an editor or admin of a space.
  const spaceRow = h("p", { class: "upload-language", hidden: true });

  replace(main,
    h("div", { class: "view-head" }, h("h1", { tabindex: "-1" }, t("upload.heading"))),
    recorderSection(), languageRow, spaceRow, zone, live, list);
  api.spaces().then((answer) => {
    const open = answer.items.filter((s) => s.role !== "viewer");
    if (!open.length) return;
    const chosen = space ?? open.find((s) => s.default)?.id ?? "";
    const select = h("select", { id: "upload-space", name: "space" },
      h("option", { value: "", selected: chosen === "" }, t("upload.space_mine")),
      open.map((s) => h("option", { value: s.id, selected: s.id === chosen }, s.name)));
    space = chosen;
    select.addEventListener("change", () => { space = select.value; });
    replace(spaceRow, h("label", { for: "upload-space" }, t("upload.space")), " ", select);
    spaceRow.hidden = false;
  }).catch(() => { /* no chooser: the user's default space applies */ });

  picker.addEventListener("change", () => {
    add([...(picker.files ?? [])], list);
    picker.value = "";
  });
  /** @param {boolean} on */
  const hover = (on) => (/** @type {Event} */ event) => {
    event.preventDefault();
    zone.classList.toggle("drop-active", on);
  };
  zone.addEventListener("dragenter", hover(true));
  zone.addEventListener("dragover", hover(true));
  zone.addEventListener("dragleave", hover(false));
  zone.addEventListener("drop", (event) => {
    hover(false)(event);
    add([...(event.dataTransfer?.files ?? [])], list);
  });
  // A file dropped beside the zone must not make the browser open it instead.
  /** @param {Event} event */
  const stray = (event) => event.preventDefault();
  window.addEventListener("dragover", stray);
  window.addEventListener("drop", stray);

  return () => {
    window.removeEventListener("dragover", stray);
    window.removeEventListener("drop", stray);
  };
}
