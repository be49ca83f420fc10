// @ts-check
// The vocabulary section of the settings page: names and terms the recognizer is
// told for the user's recordings (people, companies, products), one a line, saved
// whole; the names of the user's known voices are shown beside them (they join
// automatically, renamed on the voices page). Below it, one list per space the user is a
// member of, told for every record in that space: editable by its editors and admins,
// shown read only to a viewer (the server decides; the page only follows the role).

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";

/** @returns {{section: HTMLElement, cleanup: () => void}} */
export function vocabularySettings() {
  const box = h("textarea", { id: "vocabulary-terms", class: "vocabulary-terms", rows: "6",
    "aria-describedby": "vocabulary-hint" });
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const voices = h("p", { class: "muted vocabulary-voices" });
  const save = h("button", { type: "submit" }, t("vocabulary.save"));
  const form = h("form", { class: "vocabulary" },
    h("p", {}, h("label", { for: "vocabulary-terms" }, t("vocabulary.label"))), box,
    h("p", { class: "muted", id: "vocabulary-hint" }, t("vocabulary.hint")),
    h("p", {}, save), status, voices);
  const spaces = h("div", { class: "vocabulary-spaces" });
  const section = h("section", { class: "panel", "aria-labelledby": "vocabulary-heading" },
    h("h2", { id: "vocabulary-heading" }, t("vocabulary.heading")), form, spaces);
  const controller = new AbortController();

  /** @param {import("./types.js").Vocabulary} vocabulary */
  function show(vocabulary) {
    box.value = vocabulary.terms.join("\n");
    replace(voices, vocabulary.voice_names.length
      ? t("vocabulary.voices", { names: vocabulary.voice_names.join(", ") }) : "");
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const terms = box.value.split("\n").map((line) => line.trim()).filter(Boolean);
    try {
      show(await api.putVocabulary(terms));
      status.textContent = t("vocabulary.saved");
    } catch (error) {
      status.textContent = error.message;
    }
  });
  api.vocabulary(controller.signal).then(show, (error) => {
    if (error.name !== "AbortError") status.textContent = error.message;
  });
  (async () => {
    for (const space of (await api.spaces(controller.signal)).items) {
      const kept = await api.spaceVocabulary(space.id, controller.signal);
      spaces.append(spaceForm(space, kept.terms));
    }
  })().catch((error) => {
    if (error.name !== "AbortError") status.textContent = error.message;
  });
  return { section, cleanup: () => controller.abort() };
}

/**
 * One space's list: a form for its editors and admins, read only for a viewer.
 * @param {import("./types.js").Space} space
 * @param {string[]} terms
 */
function spaceForm(space, terms) {
  const id = `vocabulary-space-${space.id}`;
  const editable = space.role !== "viewer";
  const box = h("textarea", { id, class: "vocabulary-terms", rows: "4" });
  box.value = terms.join("\n");
  box.readOnly = !editable;
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const form = h("form", { class: "vocabulary vocabulary-space" },
    h("p", {}, h("label", { for: id }, t("vocabulary.space", { name: space.name }))), box,
    editable ? h("p", {}, h("button", { type: "submit" }, t("vocabulary.save")))
      : h("p", { class: "muted" }, t("vocabulary.space_read_only")), status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!editable) return;
    const given = box.value.split("\n").map((line) => line.trim()).filter(Boolean);
    try {
      box.value = (await api.putSpaceVocabulary(space.id, given)).terms.join("\n");
      status.textContent = t("vocabulary.saved");
    } catch (error) {
      status.textContent = error.message;
    }
  });
  return form;
}
