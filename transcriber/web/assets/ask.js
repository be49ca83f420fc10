// @ts-check
// Ask: a question put to the person's recordings (POST /app/ask, docs/ask.md).
// Offline the answer is the passages, grouped by record, each with its best
// sentence marked; with a language model its short answer comes first, as
// text. The passages arrive first as server-sent events, then the model's
// words as it writes them, then the checked answer, which replaces those words. Every line and citation links to its moment on the card
// (`/records/<id>?t=<ms>&u=<index>`). Everything a transcript or a model says
// is set as text, never parsed as HTML. Follow-up questions keep the
// conversation (its id lives in this page); "New conversation" forgets it. The
// person's conversations are listed below (GET /app/ask/conversations): one
// opens to be continued, or is deleted.

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

/** @param {import("./api.js").AskCitation[]} citations */
function citationsView(citations) {
  return h("ul", { class: "ask-citations" }, citations.map((c) =>
    h("li", {}, h("a", { href: momentUrl(c.record_id, c) },
      `[${c.passage}] ${clock(c.start_ms)}`), " ",
    c.speaker ? `${c.speaker}: ` : "", "«", c.quote, "»")));
}

/** @param {AskAnswer} answer */
function answerView(answer) {
  const parts = [];
  if (answer.answer !== null) {
    parts.push(h("p", { class: "ask-text" }, answer.answer));
    if (answer.unchecked) {
      parts.push(h("p", { class: "muted small" }, t("ask.unchecked", { n: answer.unchecked })));
    }
    if (answer.citations.length) parts.push(citationsView(answer.citations));
  } else if (answer.passages.length) {
    parts.push(h("p", { class: "muted" }, t("ask.offline")));
  }
  return parts;
}

/**
 * A stored turn as the history shows it: the question, the answer (none where it
 * cited a recording the person no longer sees) and its citations.
 * @param {import("./api.js").ConversationTurn} turn
 */
function storedTurnView(turn) {
  return h("div", { class: "ask-turn" },
    h("h2", { class: "ask-question" }, turn.question),
    turn.answer !== null ? h("p", { class: "ask-text" }, turn.answer) : "",
    turn.citations.length ? citationsView(turn.citations) : "");
}

/**
 * The person's conversations, the latest used first: each opens (its turns become
 * the history and the next question follows it) or is deleted.
 * @param {{signal: () => AbortSignal, onOpen: (id: string) => void,
 *   onDeleted: (id: string) => void, onError: (error: unknown) => void}} hooks
 */
function conversationsList(hooks) {
  const list = h("ul", { class: "ask-conversation-list" });
  const more = h("button", { type: "button", class: "button button-quiet", hidden: true },
    t("ask.more"));
  const empty = h("p", { class: "muted small", hidden: true }, t("ask.conversations_empty"));
  /** @type {string | null} */
  let cursor = null;

  /** @param {import("./api.js").ConversationSummary} item */
  function itemView(item) {
    const remove = h("button", { type: "button", class: "button button-quiet button-danger" },
      t("ask.delete_conversation"));
    const open = h("button", { type: "button", class: "ask-conversation-open" },
      item.first_question || t("ask.untitled"));
    const row = h("li", { class: "ask-conversation" }, open, " ",
      h("time", { class: "muted small", datetime: item.updated_at }, when(item.updated_at)),
      " ", h("span", { class: "muted small" }, t("ask.turns", { n: item.turns })), " ", remove);
    open.addEventListener("click", () => hooks.onOpen(item.id));
    remove.addEventListener("click", async () => {
      if (!window.confirm(t("ask.delete_confirm"))) return;
      try {
        await api.deleteConversation(item.id);
        row.remove();
        empty.hidden = list.childElementCount > 0;
        hooks.onDeleted(item.id);
      } catch (error) {
        hooks.onError(error);
      }
    });
    return row;
  }

  /** @param {boolean} fresh */
  async function load(fresh) {
    try {
      const page = await api.listConversations(fresh ? null : cursor, hooks.signal());
      if (fresh) replace(list);
      list.append(...page.items.map(itemView));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      empty.hidden = list.childElementCount > 0;
    } catch (error) {
      if (error instanceof DOMException && error.name === "AbortError") return;
      hooks.onError(error);
    }
  }
  more.addEventListener("click", () => load(false));
  const section = h("section", { class: "ask-conversations" },
    h("h2", {}, t("ask.conversations")), empty, list, more);
  return { section, reload: () => load(true) };
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

  const saved = conversationsList({
    signal: () => controller.signal,
    onOpen: async (id) => {
      controller.abort();
      controller = new AbortController();
      try {
        const opened = await api.getConversation(id, controller.signal);
        conversation = opened.id;
        replace(results);
        replace(history, opened.turns.slice().reverse().map(storedTurnView));
        replace(status, t("ask.continued"));
        question.focus();
      } catch (error) {
        if (error instanceof DOMException && error.name === "AbortError") return;
        replace(status, error instanceof Error ? error.message : String(error));
      }
    },
    onDeleted: (id) => {
      if (conversation !== id) return;
      conversation = null;
      replace(history);
      replace(results);
    },
    onError: (error) => replace(status, error instanceof Error ? error.message : String(error)),
  });

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
      saved.reload();
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
    form, status, results, history, saved.section);
  question.focus();
  saved.reload();
  const asked = ctx?.params.get("q");
  if (asked) {
    question.value = asked;
    form.requestSubmit();
  }
  return () => controller.abort();
}
