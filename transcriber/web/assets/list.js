// The record list: the user's recordings newest first (or best match first
// when searching), one keyset page at a time with "Load more". The page size
// is the server's default (`server.page_default`).

import * as api from "./api.js";
import { append, h, replace } from "./dom.js";
import {
  duration, haltLabel, progressText, recordName, size, stageLabel, when,
} from "./format.js";

const TYPING_PAUSE_MS = 500;

export function stageBadge(record) {
  if (record.halt) {
    return h("span", { class: "badge badge-halted", title: haltLabel(record.halt.reason) },
      "Halted");
  }
  return h("span", { class: `badge badge-${record.stage}` }, stageLabel(record.stage));
}

/** A native progress bar with its words (the ETA) beside it; `small` in the list. */
export function progressBar(progress, { small = false } = {}) {
  const text = progressText(progress);
  return h("div", { class: small ? "progress-bar progress-bar-small" : "progress-bar" },
    h("progress", { max: "1", value: String(progress.fraction), "aria-label": text }),
    h("span", { class: "progress-text" }, text));
}

function recordItem(record) {
  const facts = [duration(record.duration_ms), size(record.size_bytes)].filter(Boolean);
  return h("li", { class: "record", "data-id": record.id },
    h("div", { class: "record-main" },
      h("a", { class: "record-link", href: `/records/${encodeURIComponent(record.id)}` },
        recordName(record)),
      stageBadge(record)),
    record.progress ? progressBar(record.progress, { small: true }) : null,
    h("div", { class: "record-meta" },
      h("time", { datetime: record.created_at }, when(record.created_at)),
      facts.length ? ` · ${facts.join(" · ")}` : "",
      record.source === "telegram" ? " · from Telegram" : ""));
}

export function renderList(main, { params }) {
  let query = (params.get("q") || "").trim();
  let cursor = null;
  let controller = null;
  let typingTimer = null;

  document.title = query ? `“${query}” · Transcriber` : "Recordings · Transcriber";
  const input = h("input", {
    id: "search", type: "search", name: "q", value: query, autocomplete: "off",
    placeholder: "Words from a title, file name or transcript", maxlength: "200",
  });
  const form = h("form", { class: "search", role: "search" },
    h("label", { for: "search" }, "Search recordings"),
    h("div", { class: "search-row" }, input, h("button", { type: "submit" }, "Search")));
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const list = h("ul", { class: "records", "aria-label": "Recordings" });
  const more = h("button", { type: "button", class: "more", hidden: true }, "Load more");

  replace(main,
    h("div", { class: "view-head" },
      h("h1", { tabindex: "-1" }, "Your recordings"),
      h("a", { class: "button button-primary", href: "/upload" }, "Upload")),
    form, status, list, more);

  async function load({ reset }) {
    controller?.abort();
    controller = new AbortController();
    const { signal } = controller;
    if (reset) cursor = null;
    more.disabled = true;
    status.textContent = reset ? "Loading…" : "Loading more…";
    try {
      const page = await api.listRecords({ q: query, cursor }, signal);
      if (reset) list.replaceChildren();
      append(list, page.items.map(recordItem));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      more.disabled = false;
      const shown = list.children.length;
      if (shown === 0) {
        replace(status, query
          ? `Nothing matches “${query}”.`
          : ["No recordings yet. ", h("a", { href: "/upload" }, "Upload one"), "."]);
      } else if (query) {
        status.textContent = `${shown}${cursor ? "+" : ""} found for “${query}”.`;
      } else {
        status.textContent = `${shown}${cursor ? "+" : ""} recordings.`;
      }
    } catch (error) {
      if (error.name === "AbortError") return;
      more.disabled = false;
      replace(status, h("span", { class: "error-text" }, error.message));
    }
  }

  function search(pushHistory) {
    const next = input.value.trim();
    if (next === query && !pushHistory) return;
    query = next;
    const url = query ? `/?q=${encodeURIComponent(query)}` : "/";
    if (pushHistory) window.history.pushState(null, "", url);
    else window.history.replaceState(null, "", url);
    document.title = query ? `“${query}” · Transcriber` : "Recordings · Transcriber";
    load({ reset: true });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(typingTimer);
    search(true);
  });
  input.addEventListener("input", () => {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => search(false), TYPING_PAUSE_MS);
  });
  more.addEventListener("click", () => load({ reset: false }));

  load({ reset: true });
  return () => {
    clearTimeout(typingTimer);
    controller?.abort();
  };
}
