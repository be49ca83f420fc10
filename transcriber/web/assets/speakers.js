// @ts-check
// The record's speakers on its card: each in its own colour with its share of
// the talk time, renamed in place (Enter saves, Esc cancels), and on every
// line of the transcript their name, which opens a chooser that moves the line to
// another speaker when asked. A record of one speaker shows none of it.

import * as api from "./api.js";
import { editInPlace, h, replace } from "./dom.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */
/** @typedef {import("./types.js").Utterance} Utterance */
/** @typedef {import("./types.js").Suggestion} Suggestion */

const COLOURS = 8; // .speaker-1 … .speaker-8 in app.css; more speakers reuse them

/** @param {string} label `S1`, `S2`, … */
function number(label) {
  return Number(label.slice(1));
}

/** @param {RecordCard} record */
export function labels(record) {
  return Object.keys(record.speakers || {}).sort((a, b) => number(a) - number(b));
}

/** @param {string} label */
export function colourClass(label) {
  return `speaker-${((number(label) - 1) % COLOURS) + 1}`;
}

/**
 * @param {{speakers?: RecordCard["speakers"]}} record a card, or a list's row (no speakers)
 * @param {string} label
 */
export function speakerName(record, label) {
  const name = record.speakers?.[label]?.name;
  return name || t("speakers.unnamed", { n: number(label) });
}

/**
 * @param {RecordCard} record
 * @param {string} label
 */
function share(record, label) {
  const total = labels(record).reduce((sum, l) => sum + record.speakers[l].talk_ms, 0);
  return total ? Math.round((100 * record.speakers[label].talk_ms) / total) : 0;
}

/**
 * The speakers panel; `saved(record)` gets the card a rename answered with.
 * @param {{id: string, saved: (record: RecordCard) => void, note: HTMLElement}} options
 */
export function speakerPanel({ id, saved, note }) {
  const list = h("ul", { class: "speakers" });
  const panel = h("section", { class: "panel speakers-panel", "aria-labelledby": "speakers-h",
    hidden: true }, h("h2", { id: "speakers-h" }, t("speakers.heading")), list);
  let editing = false;

  /**
   * @param {HTMLElement} item
   * @param {RecordCard} record
   * @param {string} label
   */
  function rename(item, record, label) {
    if (editing) return;
    editing = true;
    const input = h("input", { type: "text", class: "speaker-input", maxlength: "64",
      value: record.speakers[label].name,
      "aria-label": t("speakers.rename_label", { name: speakerName(record, label) }) });
    const shown = item.querySelector(".speaker-name");
    if (!(shown instanceof HTMLElement)) return;
    editInPlace(shown, input, {
      closed: () => { editing = false; },
      save: async (close) => {
        const answer = await api.editRecord(id, { speakers: { [label]: input.value.trim() } });
        close();
        note.textContent = t("speakers.saved");
        saved(answer);
      },
      failed: (error) => { note.textContent = error.message; },
    });
  }

  /** @param {RecordCard} record */
  function show(record) {
    const found = severalSpeakers(record) ? labels(record) : [];
    panel.hidden = found.length === 0;
    if (editing) return;
    replace(list, found.map((label) => {
      const item = h("li", { class: `speaker ${colourClass(label)}`, "data-speaker": label },
        h("span", { class: "speaker-swatch", "aria-hidden": "true" }),
        h("span", { class: "speaker-name" }, speakerName(record, label)),
        h("span", { class: "speaker-share" },
          t("speakers.share", { share: share(record, label) })));
      const button = h("button", { type: "button", class: "link speaker-rename",
        "aria-label": t("speakers.rename_label", { name: speakerName(record, label) }) },
      t("speakers.rename"));
      button.addEventListener("click", () => rename(item, record, label));
      item.append(button);
      const suggested = record.speakers[label].suggested;
      if (suggested) item.append(suggestion(record, label, suggested));
      return item;
    }));
  }

  // A known voice it sounds like: one click confirms (the name is given and the voice
  // learns from this record) or rejects it (never suggested for this speaker again).
  /**
   * @param {RecordCard} record
   * @param {string} label
   * @param {Suggestion} suggested
   */
  function suggestion(record, label, suggested) {
    /**
     * @param {typeof api.confirmVoice} call
     * @param {string} done the catalogue key of what is said after
     * @returns {(event: Event) => Promise<void>}
     */
    const act = (call, done) => async (event) => {
      const target = /** @type {HTMLElement} */ (event.target);
      const buttons = target.parentElement?.querySelectorAll("button") ?? [];
      for (const b of buttons) b.disabled = true;
      try {
        const answer = await call(id, label, suggested.profile_id);
        note.textContent = t(done, { name: suggested.name });
        saved(answer);
      } catch (error) {
        for (const b of buttons) b.disabled = false;
        note.textContent = error.message;
      }
    };
    return h("p", { class: "speaker-suggestion" },
      t("voices.suggested", { name: suggested.name,
        percent: Math.round(100 * suggested.similarity) }), " ",
      h("button", { type: "button", class: "link voice-confirm",
        "aria-label": t("voices.confirm_label", { name: suggested.name,
          speaker: speakerName(record, label) }),
        onclick: act(api.confirmVoice, "voices.confirmed") }, t("voices.confirm")), " ",
      h("button", { type: "button", class: "link voice-reject",
        "aria-label": t("voices.reject_label", { name: suggested.name,
          speaker: speakerName(record, label) }),
        onclick: act(api.rejectVoice, "voices.rejected") }, t("voices.reject")));
  }

  return { panel, show, isEditing: () => editing };
}

/**
 * Whether the record's speakers are shown at all: one speaker (or none told apart)
 * has no furniture, neither the panel nor a label on its lines.
 * @param {RecordCard} record
 */
export function severalSpeakers(record) {
  return labels(record).length > 1;
}

/**
 * The speaker's name on a line, a label; asked (a click, Enter), it becomes a chooser
 * that moves the line to another speaker (a correction of `revision`); Esc or leaving
 * it puts the label back. No native <select> stands on every line.
 * @param {RecordCard} record
 * @param {Utterance} u
 * @param {{move: (u: Utterance, speaker: string, select: HTMLSelectElement) => void}} handlers
 */
export function lineSpeaker(record, u, { move }) {
  if (!u.speaker || !severalSpeakers(record)) return null;
  const speaker = u.speaker;
  const label = h("button", { type: "button", class: `line-speaker ${colourClass(speaker)}`,
    "aria-label": t("speakers.move_label", { name: speakerName(record, speaker) }),
    "aria-haspopup": "listbox" }, speakerName(record, speaker));
  label.addEventListener("click", (event) => {
    event.stopPropagation();
    const select = h("select", { class: `line-speaker-choice ${colourClass(speaker)}`,
      "aria-label": t("speakers.move_label", { name: speakerName(record, speaker) }) },
    labels(record).map((other) => h("option", { value: other, selected: other === speaker },
      speakerName(record, other))));
    let open = true;
    const back = () => {
      // Once: removing the focused chooser fires its blur, which would come back here.
      if (!open || select.disabled) return;
      open = false;
      select.replaceWith(label);
    };
    select.addEventListener("click", (clicked) => clicked.stopPropagation());
    select.addEventListener("change", () => {
      if (select.value !== speaker) move(u, select.value, select);
      else back();
    });
    select.addEventListener("blur", back);
    select.addEventListener("keydown", (key) => {
      if (key.key !== "Escape") return;
      key.preventDefault();
      key.stopPropagation();
      back();
      label.focus();
    });
    label.replaceWith(select);
    select.focus();
  });
  return label;
}
