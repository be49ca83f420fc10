// @ts-check
// The record list: the user's recordings newest first (or best match first
// when searching, or one topic's), one keyset page at a time with "Load
// more". The page size is the server's default (`server.page_default`).
// A search result shows where its transcript matched: a line per utterance
// (its time, speaker and text with the matched words marked), each a link to
// the card that plays from that moment.

import * as api from "./api.js";
import { qualityMark } from "./card-quality.js";
import { append, h, replace } from "./dom.js";
import {
  briefLine, duration, haltLabel, progressText, recordName, size, stageLabel, when,
} from "./format.js";
import { t } from "./i18n.js";
import { colourClass, speakerName } from "./speakers.js";

/** @typedef {import("./types.js").RecordSummary} RecordSummary */
/** @typedef {import("./types.js").SearchResult} SearchResult */
/** @typedef {import("./types.js").Match} Match */
/** @typedef {import("./types.js").Progress} Progress */
/** @typedef {import("./types.js").ViewContext} ViewContext */
/** @typedef {import("./dom.js").Child} Child */

const TYPING_PAUSE_MS = 500;
// The tokens of transcriber/domain/search.py: a quoted phrase (its closing
// quote optional), or a run of anything but spaces.
const TOKEN_RE = /(-?)"([^"]*)"?|(\S+)/gu;
const WORD_RE = /[\p{L}\p{N}]/u;
const LETTERS_RE = /[\p{L}\p{N}]+/gu;
const PREFIX_MIN = 2;

/**
 * What to ask for while the person types `value`: the query with `*` after
 * its last word when that word is still being typed (no space after it) and
 * is a plain word (not a phrase, not excluded, no `*` yet), so "недел" finds
 * "неделя". A plain word matches its forms only, never as a prefix. A last word
 * of one letter is asked as it stands (a one-letter prefix is refused).
 * @param {string} value
 */
export function searchAsTyped(value) {
  const query = value.trim();
  if (!query || /\s$/u.test(value)) return query;
  /** @type {RegExpExecArray | null} */
  let last = null;
  for (const found of value.matchAll(TOKEN_RE)) last = found;
  const word = last?.[3];
  if (!word || word.startsWith("-") || word.includes("*") || word.includes('"')
      || !WORD_RE.test(word)) return query;
  // The server refuses a prefix of fewer letters (search_query.PREFIX_MIN): a first
  // letter typed is asked as a word until the second comes.
  const pieces = word.match(LETTERS_RE) || [];
  if (Array.from(pieces[pieces.length - 1] || "").length < PREFIX_MIN) return query;
  return `${query}*`;
}

/**
 * `text` with its `marks` ([start, end) in code points, in order) as
 * `<mark>` elements: text nodes and elements, never parsed markup.
 * @param {string} text
 * @param {[number, number][] | null | undefined} marks
 */
export function markedText(text, marks) {
  const chars = Array.from(text);
  /** @type {Child[]} */
  const parts = [];
  let at = 0;
  for (const [start, end] of marks || []) {
    const from = Math.max(at, start);
    const to = Math.min(end, chars.length);
    if (to <= from) continue;
    if (from > at) parts.push(chars.slice(at, from).join(""));
    parts.push(h("mark", {}, chars.slice(from, to).join("")));
    at = to;
  }
  if (at < chars.length) parts.push(chars.slice(at).join(""));
  return parts;
}

/**
 * The card's address that plays `match` (an utterance of the record `id`).
 * @param {string} id
 * @param {Match} match
 */
export function momentHref(id, match) {
  return `/records/${encodeURIComponent(id)}?t=${match.start_ms}&u=${match.utterance_index}`;
}

/** @param {SearchResult} record */
function snippets(record) {
  const matches = record.matches || [];
  if (!matches.length) return null;
  return h("ul", { class: "snippets", "aria-label": t("list.snippets") },
    matches.map((match) => h("li", {},
      h("a", { class: "snippet", href: momentHref(record.id, match),
        title: t("list.snippet_title", { time: duration(match.start_ms) }) },
      h("span", { class: "snippet-time" }, duration(match.start_ms)),
      match.speaker ? h("span", { class: `snippet-speaker ${colourClass(match.speaker)}` },
        // A list row carries no speaker names (the card does): the label's own.
        speakerName({}, match.speaker)) : null,
      h("span", { class: "snippet-text" }, markedText(match.snippet, match.marks))))));
}

/** @param {RecordSummary} record */
export function stageBadge(record) {
  if (record.halt) {
    return h("span", { class: "badge badge-halted", title: haltLabel(record.halt.reason) },
      t("list.halted"));
  }
  return h("span", { class: `badge badge-${record.stage}` }, stageLabel(record.stage));
}

/**
 * @param {string} name
 * @param {{current?: boolean}} [options]
 */
export function topicChip(name, { current = false } = {}) {
  return h("a", { class: "chip", href: `/?topic=${encodeURIComponent(name)}`,
    "aria-current": current ? "true" : null, "data-topic": name }, name);
}

/**
 * A native progress bar with its words (the ETA) beside it; `small` in the list.
 * @param {Progress} progress
 * @param {{small?: boolean}} [options]
 */
export function progressBar(progress, { small = false } = {}) {
  const text = progressText(progress);
  return h("div", { class: small ? "progress-bar progress-bar-small" : "progress-bar" },
    h("progress", { max: "1", value: String(progress.fraction), "aria-label": text }),
    h("span", { class: "progress-text" }, text));
}

/** @param {SearchResult} record */
function recordItem(record) {
  const facts = [duration(record.duration_ms), size(record.size_bytes)].filter(Boolean);
  const topics = record.topics || [];
  return h("li", { class: "record", "data-id": record.id },
    h("div", { class: "record-main" },
      h("a", { class: "record-link", href: `/records/${encodeURIComponent(record.id)}` },
        recordName(record)),
      stageBadge(record), qualityMark(record)),
    record.brief ? h("p", { class: "record-brief" }, briefLine(record.brief)) : null,
    record.progress ? progressBar(record.progress, { small: true }) : null,
    h("div", { class: "record-meta" },
      h("time", { datetime: record.created_at }, when(record.created_at)),
      facts.length ? ` · ${facts.join(" · ")}` : "",
      record.source === "telegram" ? t("list.from_telegram") : ""),
    topics.length ? h("div", { class: "chips" }, topics.map((name) => topicChip(name))) : null,
    snippets(record));
}

/**
 * @param {string} query
 * @param {string} topic
 */
function titleFor(query, topic) {
  if (query) return t("title.search", { query });
  if (topic) return t("title.topic", { topic });
  return t("title.list");
}

/**
 * @param {string} value
 * @param {string} current
 * @param {string} label
 */
function scopeOption(value, current, label) {
  return h("option", { value, selected: value === current }, label);
}

/**
 * @param {HTMLElement} main
 * @param {ViewContext} ctx
 * @returns {() => void}
 */
export function renderList(main, { params }) {
  let query = (params.get("q") || "").trim();
  // What the server is asked: `query`, or it with the last word as a prefix
  // when it was typed (the history entry remembers which, so Back shows the
  // same results).
  let asked = query && window.history.state?.prefix ? `${query}*` : query;
  const topic = query ? "" : (params.get("topic") || "").trim();
  // Whose records: everything the user may see (""), `mine`, `shared` or `space:<id>`.
  let scope = (params.get("scope") || "").trim();
  /** @type {string | null} */
  let cursor = null;
  /** @type {AbortController | null} */
  let controller = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typingTimer;

  document.title = titleFor(query, topic);
  const input = h("input", {
    id: "search", type: "search", name: "q", value: query, autocomplete: "off",
    placeholder: t("list.search_placeholder"), maxlength: "200",
  });
  const scopeSelect = h("select", { id: "scope", name: "scope", "aria-label": t("list.scope") },
    scopeOption("", scope, t("list.scope_all")), scopeOption("mine", scope, t("list.scope_mine")),
    scopeOption("shared", scope, t("list.scope_shared")));
  const form = h("form", { class: "search", role: "search" },
    h("label", { for: "search" }, t("list.search_label")),
    h("div", { class: "search-row" }, input, scopeSelect,
      h("button", { type: "submit" }, t("list.search"))));
  const topicBar = h("nav", { class: "chips topic-bar", "aria-label": t("list.topics") });
  const filter = topic
    ? h("p", { class: "topic-filter" }, t("list.filtered_by"), " ", h("strong", {}, topic), " ",
      h("a", { href: "/", class: "button-quiet" }, t("list.clear_filter")))
    : null;
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const list = h("ul", { class: "records", "aria-label": t("list.aria") });
  const more = h("button", { type: "button", class: "more", hidden: true }, t("list.more"));

  replace(main,
    h("div", { class: "view-head" },
      h("h1", { tabindex: "-1" }, t("list.heading")),
      h("a", { class: "button button-primary", href: "/upload" }, t("nav.upload"))),
    form, topicBar, filter, status, list, more);

  async function loadTopics() {
    try {
      const answer = await api.topics(controller?.signal);
      replace(topicBar, answer.items.filter((item) => item.records > 0)
        .map((item) => topicChip(item.name, { current: item.name === topic })));
    } catch {
      topicBar.replaceChildren(); // the list itself says what went wrong
    }
  }

  /** @param {{reset: boolean}} options */
  async function load({ reset }) {
    controller?.abort();
    controller = new AbortController();
    const { signal } = controller;
    if (reset) cursor = null;
    more.disabled = true;
    status.textContent = reset ? t("common.loading") : t("list.loading_more");
    try {
      const page = await api.listRecords({ q: asked, topic, cursor, scope }, signal);
      if (reset) list.replaceChildren();
      append(list, page.items.map(recordItem));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      more.disabled = false;
      const shown = list.children.length;
      const count = `${shown}${cursor ? "+" : ""}`;
      if (shown === 0) {
        if (query) replace(status, t("list.no_match", { query }));
        else if (topic) replace(status, t("list.no_topic", { topic }));
        else replace(status, t("list.empty"), h("a", { href: "/upload" }, t("list.empty_link")), ".");
      } else if (query) {
        status.textContent = t("list.found", { count, query });
      } else {
        status.textContent = t("list.count", { count });
      }
    } catch (error) {
      if (error.name === "AbortError") return;
      more.disabled = false;
      replace(status, h("span", { class: "error-text" }, error.message));
    }
  }

  // Typing asks for the last word as a prefix; Enter asks for the words as they stand.
  /** @param {boolean} pushHistory */
  function search(pushHistory) {
    const next = input.value.trim();
    const nextAsked = pushHistory ? next : searchAsTyped(input.value);
    if (nextAsked === asked && !pushHistory) return;
    query = next;
    asked = nextAsked;
    const url = query ? `/?q=${encodeURIComponent(query)}` : "/";
    const state = asked === query ? null : { prefix: true };
    if (pushHistory) window.history.pushState(state, "", url);
    else window.history.replaceState(state, "", url);
    document.title = titleFor(query, "");
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
  scopeSelect.addEventListener("change", () => {
    scope = scopeSelect.value;
    load({ reset: true });
  });
  api.spaces().then((answer) => {
    append(scopeSelect, answer.items.map((s) => scopeOption(`space:${s.id}`, scope, s.name)));
  }).catch(() => { /* the list itself says what went wrong */ });

  load({ reset: true });
  loadTopics();
  return () => {
    clearTimeout(typingTimer);
    controller?.abort();
  };
}
