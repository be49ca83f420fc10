// @ts-check
// Why a record stopped, while it may go on: the reason, the step it stopped
// in, the server's message and a Resume button. Empty while it moves.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { haltLabel, when } from "./format.js";
import { t } from "./i18n.js";
import { work } from "./card-facts.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */

/**
 * @param {{id: string, refresh: () => void}} options `refresh`: ask for the card
 *   again (after a resume, or when the server says it is not stopped).
 */
export function haltSlot({ id, refresh }) {
  const element = h("div", { class: "halt-slot" });

  /** @param {RecordCard} record */
  function show(record) {
    if (!record.halt) {
      element.replaceChildren();
      return;
    }
    const button = h("button", { type: "button", class: "button button-primary" },
      t("halt.resume"));
    const note = h("p", { class: "resume-note", "aria-live": "polite" });
    button.addEventListener("click", async () => {
      button.disabled = true;
      button.textContent = t("halt.resuming");
      try {
        await api.resume(id);
        note.textContent = t("halt.resumed");
        refresh();
      } catch (error) {
        const failure = /** @type {api.ApiError} */ (error);
        button.disabled = false;
        button.textContent = t("halt.resume");
        replace(note, h("span", { class: "error-text" }, failure.message));
        if (failure.code === "not_halted") refresh();
      }
    });
    replace(element, h("section", { class: "halt", "aria-labelledby": "halt-h" },
      h("h2", { id: "halt-h" }, t("halt.heading")),
      h("p", {}, h("strong", {}, haltLabel(record.halt.reason)),
        t("halt.while", { work: work(record.stage) }),
        h("time", { datetime: record.halt.at }, when(record.halt.at))),
      record.halt.message ? h("p", { class: "halt-message" }, record.halt.message) : null,
      h("p", {}, t("halt.hint")),
      h("div", { class: "actions" }, button), note));
  }

  return { element, show };
}
