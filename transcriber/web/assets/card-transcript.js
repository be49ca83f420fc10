// @ts-check
// The card's transcript: one button per utterance that plays from its start (a
// click on one of its words, from that word), the speaker's name (a label that
// moves the line to another speaker when asked, speakers.js), and a correction in place: click the text, type, Enter saves
// a new revision, Esc cancels. A correction made on an older revision is
// refused (409) and said so. The transcript is not redrawn while an editor
// is open under the person's hands, nor when nothing in it changed.

import * as api from "./api.js";
import { utteranceText } from "./card-quality.js";
import { editInPlace, h, replace } from "./dom.js";
import { duration } from "./format.js";
import { t } from "./i18n.js";
import { colourClass, lineSpeaker } from "./speakers.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */
/** @typedef {import("./types.js").Utterance} Utterance */

/**
 * @param {{
 *   id: string,
 *   note: HTMLElement,
 *   revision: () => number,
 *   seek: (startMs: number) => void,
 *   saved: (record: RecordCard) => void,
 *   stale: () => void,
 * }} options `note`: where saves and refusals are said; `revision`: the
 *   card's revision shown; `saved`: the card a correction answered with;
 *   `stale`: the card moved on meanwhile, ask for it again.
 */
export function transcriptView({ id, note, revision, seek, saved, stale }) {
  const element = h("div", { class: "transcript" });
  /** @type {string | null} */
  let shown = null;
  /** @type {HTMLElement[]} */
  let buttons = [];
  let editing = 0; // utterance editors open

  /** @param {unknown} error */
  function refused(error) {
    const failure = /** @type {api.ApiError} */ (error);
    note.textContent = failure.code === "conflict" ? t("transcript.conflict") : failure.message;
    return failure.code === "conflict";
  }

  /** @param {RecordCard} record */
  function answered(record) {
    note.textContent = t("transcript.saved");
    shown = null;
    saved(record);
  }

  /**
   * @param {HTMLElement} item
   * @param {Utterance} u
   */
  function editUtterance(item, u) {
    const fix = item.querySelector(".utterance-text-edit");
    if (item.querySelector("input") || !(fix instanceof HTMLElement)) return;
    editing += 1;
    const input = h("input", { type: "text", class: "utterance-input", value: u.text,
      "aria-label": t("transcript.edit_label", { time: duration(u.start_ms) }) });
    editInPlace(fix, input, {
      closed: () => { editing -= 1; },
      save: async (close) => {
        const record = await api.correctTranscript(id, revision(),
          [{ index: u.index, text: input.value }]);
        close();
        answered(record);
      },
      failed: (error, close) => {
        if (refused(error)) {
          close();
          shown = null;
          stale();
        }
      },
    });
  }

  /**
   * @param {Utterance} u
   * @param {string} speaker
   * @param {HTMLSelectElement} select
   */
  async function moveLine(u, speaker, select) {
    select.disabled = true;
    try {
      answered(await api.correctTranscript(id, revision(), [{ index: u.index, speaker }]));
    } catch (error) {
      select.disabled = false;
      refused(error);
      shown = null;
      stale();
    }
  }

  /**
   * @param {RecordCard} record
   * @param {Utterance} u
   */
  function line(record, u) {
    const button = h("button", {
      type: "button", class: "utterance", "data-start": u.start_ms, "data-end": u.end_ms,
      "aria-label": t("transcript.play_from", { time: duration(u.start_ms), text: u.text }),
      // A click on a word plays from that word; elsewhere on the line, from its start.
      onclick: (/** @type {MouseEvent} */ event) => {
        const word = event.target instanceof Element ? event.target.closest(".word") : null;
        seek(word instanceof HTMLElement ? Number(word.dataset.start) : u.start_ms);
      },
    }, h("span", { class: "utterance-time" }, duration(u.start_ms)),
    h("span", { class: "utterance-text" }, utteranceText(u)));
    const speaker = lineSpeaker(record, u, { move: moveLine });
    const item = h("li", { "data-index": u.index,
      class: speaker && u.speaker ? `speaker-line ${colourClass(u.speaker)}` : null },
    speaker, button);
    const fix = h("span", { class: "utterance-text-edit", role: "button", tabindex: "0",
      title: t("transcript.edit_hint") }, t("transcript.edit"));
    fix.addEventListener("click", () => editUtterance(item, u));
    fix.addEventListener("keydown", (event) => {
      if (event.key === "Enter") editUtterance(item, u);
    });
    item.append(fix);
    return { button, item };
  }

  /**
   * Draw the transcript unless it is the one shown or an editor is open.
   * @param {RecordCard} record
   * @returns {boolean} whether it was drawn again
   */
  function show(record) {
    const key = JSON.stringify([record.transcript, record.utterances.length, !!record.halt,
      record.revision, record.speakers]);
    if (key === shown || editing) return false;
    shown = key;
    if (record.utterances.length) {
      const items = record.utterances.map((u) => line(record, u));
      buttons = items.map((x) => x.button);
      replace(element, h("ol", { class: "utterances" }, items.map((x) => x.item)));
    } else if (record.transcript) {
      buttons = [];
      replace(element, record.transcript.split("\n").map((text) => h("p", {}, text)));
    } else {
      buttons = [];
      replace(element, h("p", { class: "muted" }, record.halt
        ? t("transcript.none_halted") : t("transcript.pending")));
    }
    return true;
  }

  /** @param {number} index */
  function showLine(index) {
    element.querySelector(`.utterances > li[data-index="${index}"]`)
      ?.scrollIntoView({ block: "center" });
  }

  return { element, show, showLine, buttons: () => buttons };
}
