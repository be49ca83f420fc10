// Upload: pick files or drop them; each is sent in turn with a progress bar,
// and the API's refusals (413 too large, 415 not audio, …) are shown as the
// server words them. The queue lives beside the view, so leaving the page
// and coming back shows the uploads still running.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { recordName, size } from "./format.js";

const queue = [];
const rows = [];
const live = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
let running = null;

window.addEventListener("beforeunload", (event) => {
  // Closing the tab would cut an upload off.
  if (running) event.preventDefault();
});

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
  entry.state.textContent = "Uploading…";
  live.textContent = `Uploading ${entry.file.name}`;
  const { promise, abort } = api.upload(entry.file, (sent, total) => {
    const percent = Math.floor((sent / total) * 100);
    entry.progress.value = percent;
    entry.state.textContent = percent < 100
      ? `Uploading… ${percent}% of ${size(total)}`
      : "Checking the audio…";
  });
  entry.abort = abort;
  try {
    const record = await promise;
    entry.progress.value = 100;
    finish(entry, "done", "Uploaded. ",
      h("a", { href: `/records/${encodeURIComponent(record.id)}` },
        `Open “${recordName(record)}”`));
    live.textContent = `${entry.file.name} uploaded`;
  } catch (error) {
    finish(entry, "error", error.message);
    live.textContent = `${entry.file.name} was not uploaded: ${error.message}`;
  } finally {
    running = null;
    next();
  }
}

function add(files, list) {
  for (const file of files) {
    const progress = h("progress", { max: "100", value: "0", "aria-label": `Upload of ${file.name}` });
    const state = h("p", { class: "upload-state" }, "Waiting…");
    const cancel = h("button", { type: "button", class: "button-quiet" }, "Cancel");
    const row = h("li", { class: "upload" },
      h("div", { class: "upload-head" },
        h("span", { class: "upload-name" }, file.name),
        h("span", { class: "muted" }, size(file.size)), cancel),
      progress, state);
    const entry = { file, row, progress, state, cancel, abort: null, cancelled: false };
    cancel.addEventListener("click", () => {
      entry.cancelled = true;
      if (entry.abort) entry.abort();
      else finish(entry, "error", "Cancelled.");
    });
    rows.unshift(row);
    list.prepend(row);
    queue.push(entry);
  }
  next();
}

export function renderUpload(main) {
  document.title = "Upload · Transcriber";
  const picker = h("input", {
    id: "file-input", type: "file", multiple: true, accept: "audio/*,video/*",
    class: "visually-hidden",
  });
  const zone = h("div", { class: "drop", "data-testid": "drop-zone" },
    h("p", { class: "drop-title" }, "Drop recordings here"),
    h("p", {}, "or"),
    h("label", { for: "file-input", class: "button button-primary" }, "Choose files"),
    picker,
    h("p", { class: "muted small" },
      "Calls, lectures, interviews: any audio or video file up to 6 hours."));
  const list = h("ul", { class: "uploads", "aria-label": "Uploads" }, rows);

  replace(main,
    h("div", { class: "view-head" }, h("h1", { tabindex: "-1" }, "Upload recordings")),
    zone, live, list);

  picker.addEventListener("change", () => {
    add([...picker.files], list);
    picker.value = "";
  });
  const hover = (on) => (event) => {
    event.preventDefault();
    zone.classList.toggle("drop-active", on);
  };
  zone.addEventListener("dragenter", hover(true));
  zone.addEventListener("dragover", hover(true));
  zone.addEventListener("dragleave", hover(false));
  zone.addEventListener("drop", (event) => {
    hover(false)(event);
    add([...event.dataTransfer.files], list);
  });
  // A file dropped beside the zone must not make the browser open it instead.
  const stray = (event) => event.preventDefault();
  window.addEventListener("dragover", stray);
  window.addEventListener("drop", stray);

  return () => {
    window.removeEventListener("dragover", stray);
    window.removeEventListener("drop", stray);
  };
}
