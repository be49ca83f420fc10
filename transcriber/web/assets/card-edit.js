// @ts-check
// The owner's part of a card: rename inline, the brief, topic chips, transcribe
// again (in a chosen language) and delete, each asking first where it cannot
// be undone. Every save answers the updated card, which the card then shows.
// A field the describer wrote carries a mark and "Keep": saving it as it is
// makes it the person's (`described` human), which no later description changes.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { isAutomatic } from "./format.js";
import { spokenSelect } from "./upload.js";

const TOPICS_MAX = 5;
/** @typedef {import("./types.js").RecordCard} RecordCard */
/** @typedef {"title" | "brief" | "topics"} Field */
/** @type {Field[]} */
const FIELDS = ["title", "brief", "topics"];

/**
 * @param {{
 *   id: string,
 *   title: HTMLElement,
 *   t: typeof import("./i18n.js").t,
 *   saved: (record: RecordCard) => void,
 *   retranscribed: () => void,
 *   deleted: () => void,
 * }} options `title`: the card's heading, hidden while it is renamed
 */
export function editors({ id, title, t, saved, retranscribed, deleted }) {
  /** @type {RecordCard | null} */
  let record = null;
  const note = h("p", { class: "edit-note", "aria-live": "polite" });
  /** @param {Error} error */
  const fail = (error) => replace(note, h("span", { class: "error-text" }, error.message));

  /**
   * @param {Parameters<typeof api.editRecord>[1]} fields
   * @param {() => void} [done]
   */
  async function save(fields, done) {
    note.textContent = t("edit.saving");
    try {
      const card = await api.editRecord(id, fields);
      note.textContent = t("edit.saved");
      saved(card);
      if (done) done();
    } catch (error) {
      fail(error);
    }
  }

  // Rename: the heading becomes a field; Enter saves, Esc cancels.
  const titleInput = h("input", { id: "title-input", type: "text", maxlength: "255",
    "aria-label": t("edit.title_label") });
  const titleForm = h("form", { class: "title-form", hidden: true }, titleInput);
  const titleButton = h("button", { type: "button", class: "button-quiet rename" },
    t("edit.rename"));
  const closeTitle = () => {
    titleForm.hidden = true;
    title.hidden = false;
    titleButton.hidden = false;
    titleButton.focus();
  };
  titleButton.addEventListener("click", () => {
    titleInput.value = record?.title || "";
    titleForm.hidden = false;
    title.hidden = true;
    titleButton.hidden = true;
    titleInput.focus();
  });
  titleForm.addEventListener("submit", (event) => {
    event.preventDefault();
    save({ title: titleInput.value.trim() }, closeTitle);
  });
  titleInput.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      closeTitle();
    }
  });

  const brief = h("textarea", { id: "brief", rows: "3", maxlength: "2000" });
  const briefSave = h("button", { type: "button", class: "button" }, t("edit.save_brief"));
  briefSave.addEventListener("click", () => save({ brief: brief.value }));

  const chips = h("ul", { class: "chips topic-chips", "aria-label": t("edit.topics") });
  const topicInput = h("input", { id: "topic-input", type: "text", maxlength: "64",
    placeholder: t("edit.topic_placeholder") });
  topicInput.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    const name = topicInput.value.trim();
    if (!name) return;
    const topics = [...new Set([...(record?.topics || []), name])];
    if (topics.length > TOPICS_MAX) {
      note.textContent = t("edit.topics_max", { max: TOPICS_MAX });
      return;
    }
    save({ topics }, () => { topicInput.value = ""; });
  });

  const language = spokenSelect("retranscribe-language");
  const again = h("button", { type: "button", class: "button" }, t("edit.retranscribe"));
  again.addEventListener("click", async () => {
    if (!window.confirm(t("edit.retranscribe_confirm"))) return;
    note.textContent = t("edit.retranscribing");
    try {
      saved(await api.retranscribe(id, language.value));
      note.textContent = t("edit.retranscribed");
      retranscribed();
    } catch (error) {
      fail(error);
    }
  });

  const remove = h("button", { type: "button", class: "button button-danger" }, t("edit.delete"));
  remove.addEventListener("click", async () => {
    if (!window.confirm(t("edit.delete_confirm"))) return;
    try {
      await api.deleteRecord(id);
      deleted();
    } catch (error) {
      fail(error);
    }
  });

  // The describer's marks: one per field it wrote, each with its "Keep" button.
  /** @type {Record<Field, HTMLElement>} */
  const marks = { title: h("span"), brief: h("span"), topics: h("span") };
  for (const field of FIELDS) {
    const keep = h("button", { type: "button", class: "button-quiet keep",
      "data-keep": field }, t("described.keep"));
    keep.addEventListener("click", () => {
      if (record) save({ [field]: record[field] });
    });
    marks[field] = h("span", { class: "auto-mark", "data-field": field, hidden: true },
      h("span", { class: "auto-label" }, t("described.auto")), " ", keep);
  }
  const describing = h("p", { class: "describe-note muted", "aria-live": "polite" });

  const panel = h("div", { class: "edit" },
    describing,
    h("label", { for: "brief" }, t("edit.brief")), marks.brief, brief,
    h("div", { class: "actions" }, briefSave),
    h("label", { for: "topic-input" }, t("edit.topics")), marks.topics, chips, topicInput,
    h("div", { class: "actions" },
      h("label", { for: "retranscribe-language" }, t("edit.language")), language, again),
    h("div", { class: "actions" }, remove),
    note);

  /** @param {RecordCard} card */
  function show(card) {
    record = card;
    if (document.activeElement !== brief) brief.value = card.brief || "";
    const topics = card.topics || [];
    replace(chips, topics.map((name) => h("li", { class: "chip", "data-topic": name },
      h("a", { href: `/?topic=${encodeURIComponent(name)}` }, name),
      h("button", { type: "button", class: "chip-remove",
        "aria-label": t("edit.remove_topic", { name }),
        onclick: () => save({ topics: topics.filter((x) => x !== name) }) }, "×"))));
    again.disabled = !(card.stage === "done" || card.halt);
    const by = card.described?.by;
    for (const field of FIELDS) {
      const mark = marks[field];
      mark.hidden = !isAutomatic(card, field);
      mark.title = by ? t("described.by", { by }) : "";
    }
    const state = card.described?.state;
    describing.textContent = state === "pending" ? t("described.pending")
      : state === "failed" ? t("described.failed") : "";
  }

  return { titleButton, titleMark: marks.title, titleForm, panel, show };
}
