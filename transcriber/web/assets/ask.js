// @ts-check
// Ask: a question put to the person's recordings (POST /app/ask, docs/ask.md).
// Offline the answer is the passages, grouped by record, each with its best
// sentence marked; with a language model its short answer comes first, as
// text. The passages arrive first as server-sent events, then the model's
// words as it writes them, then the checked answer, which replaces those words. Every line and citation links to its moment on the card
// (`/records/<id>?t=<ms>&u=<index>`). Everything a transcript or a model says
// is set as text, never parsed as HTML. Follow-up questions keep the
// conversation (its id lives in this page); "New conversation" forgets it.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { when } from "./format.js";
import { t } from "./i18n.js";

/** @typedef {import("./api.js").AskPassage} AskPassage */
/** @typedef {import("./api.js").AskAnswer} AskAnswer */

/** @param {number} ms */
function clock(ms) {
  const seconds = Math.floor(ms / 1000);
  const mm = String(Math.floor(seconds / 60) % 60).padStart(2, "0");
  const ss = String(seconds % 60).padStart(2, "0");
  const hours = Math.floor(seconds / 3600);
  return hours ? `${hours}:${mm}:${ss}` : `${mm}:${ss}`;
}

/**
 * @param {string} recordId
 * @param {{start_ms: number, utterance_index: number}} at
 */
function momentUrl(recordId, at) {
  return `/records/${encodeURIComponent(recordId)}?t=${at.start_ms}&u=${at.utterance_index}`;
}

/** @param {AskPassage} passage */
function passageView(passage) {
  const lines = passage.lines.map((line) => {
    const best = line.utterance_index === passage.best;
    /** @type {(string | HTMLElement)[]} */
    let text = [line.text];
    if (best) {
      const [start, end] = passage.mark;
      const chars = Array.from(line.text);
      text = [chars.slice(0, start).join(""), h("mark", {}, chars.slice(start, end).join("")),
        chars.slice(end).join("")];
    }
    return h("li", { class: best ? "ask-line ask-best" : "ask-line" },
      h("a", { href: momentUrl(passage.record_id, line) }, clock(line.start_ms)),
      " ", line.speaker ? h("strong", {}, line.speaker, ": ") : "", ...text);
  });
  return h("section", { class: "ask-passage" },
    h("h3", {}, h("span", { class: "ask-number" }, `[${passage.number}] `),
      h("a", { href: `/records/${encodeURIComponent(passage.record_id)}` },
        passage.title || t("record.unnamed", { id: passage.record_id })),
      " ", h("time", { class: "muted small", datetime: passage.created_at },
        when(passage.created_at))),
    h("ol", { class: "ask-lines" }, lines));
}

/** @param {AskAnswer} answer */
function answerView(answer) {
  const parts = [];
  if (answer.answer !== null) {
    parts.push(h("p", { class: "ask-text" }, answer.answer));
    if (answer.unchecked) {
      parts.push(h("p", { class: "muted small" }, t("ask.unchecked", { n: answer.unchecked })));
    }
    if (answer.citations.length) {
      parts.push(h("ul", { class: "ask-citations" }, answer.citations.map((c) =>
        h("li", {}, h("a", { href: momentUrl(c.record_id, c) },
          `[${c.passage}] ${clock(c.start_ms)}`), " ",
        c.speaker ? `${c.speaker}: ` : "", "«", c.quote, "»"))));
    }
  } else if (answer.passages.length) {
    parts.push(h("p", { class: "muted" }, t("ask.offline")));
  }
  return parts;
}

/**
 * `?record=<id>` asks about that recording only (the card's box); `?q=` asks at once.
 * @param {HTMLElement} main
 * @param {import("./types.js").ViewContext} [ctx]
 * @returns {() => void}
 */
export function renderAsk(main, ctx) {
  document.title = t("title.ask");
  const record = ctx?.params.get("record") || null;
  let controller = new AbortController();
  /** @type {string | null} */
  let conversation = null;
  const question = h("textarea", { id: "ask-question", rows: 2, maxlength: 1000,
    required: true, placeholder: t("ask.placeholder") });
  const submit = h("button", { type: "submit", class: "button" }, t("ask.submit"));
  const fresh = h("button", { type: "button", class: "button button-secondary" },
    t("ask.new_conversation"));
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" });
  const results = h("div", { class: "ask-results", "aria-live": "polite" });
  const history = h("div", { class: "ask-history" });
  const form = h("form", { class: "ask-form" },
    h("label", { for: "ask-question" }, t("ask.label")), question,
    h("p", { class: "muted small" }, t("ask.hint")),
    h("div", { class: "ask-actions" }, submit, fresh));

  fresh.addEventListener("click", () => {
    conversation = null;
    replace(history);
    replace(results);
    replace(status);
    question.focus();
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text) return;
    controller.abort();
    controller = new AbortController();
    submit.disabled = true;
    replace(status, t("ask.asking"));
    replace(results);
    try {
      // The model's words as it writes them, set as text; the checked answer that
      // follows replaces them (a citation that failed the check is gone from it).
      const writing = h("p", { class: "ask-text ask-writing" });
      const answer = await api.ask({ question: text, conversation,
        records: record ? [record] : [] }, controller.signal,
        (passages) => replace(results, writing, passages.map(passageView)),
        (piece) => { writing.textContent += piece; });
      conversation = answer.conversation;
      history.prepend(h("div", { class: "ask-turn" },
        h("h2", { class: "ask-question" }, text), answerView(answer),
        answer.passages.length
          ? answer.passages.map(passageView)
          : h("p", { class: "muted" }, t("ask.nothing"))));
      replace(results);
      replace(status);
      question.value = "";
    } catch (error) {
      if (error instanceof DOMException && error.name === "AbortError") return;
      replace(status, error instanceof Error ? error.message : String(error));
    } finally {
      submit.disabled = false;
    }
  });

  replace(main,
    h("h1", {}, t("ask.heading")),
    h("p", { class: "muted" }, record
      ? h("a", { href: `/records/${encodeURIComponent(record)}` }, t("ask.about_record"))
      : t("ask.intro")),
    form, status, results, history);
  question.focus();
  const asked = ctx?.params.get("q");
  if (asked) {
    question.value = asked;
    form.requestSubmit();
  }
  return () => controller.abort();
}
