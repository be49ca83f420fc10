// @ts-check
// The known voices page (/voices): each voice the user taught by naming speakers,
// with how many recordings and how much speech it was learned from; renamed in
// place, merged into another, deleted (two clicks). Names and counts only: the
// voice embeddings never leave the server.

import * as api from "./api.js";
import { editInPlace, h, replace } from "./dom.js";
import { duration, when } from "./format.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").Voice} Voice */

/**
 * @param {HTMLElement} main
 * @returns {() => void}
 */
export function renderVoices(main) {
  document.title = t("title.voices");
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const list = h("ul", { class: "voices", "aria-label": t("voices.heading") });
  const empty = h("p", { class: "muted", hidden: true }, t("voices.empty"));
  replace(main,
    h("div", { class: "view-head" }, h("h1", { tabindex: "-1" }, t("voices.heading"))),
    h("p", { class: "muted" }, t("voices.intro")), status, empty, list);
  /** @type {AbortController | null} */
  let controller = null;
  let editing = false;

  /**
   * @param {() => Promise<unknown>} call
   * @param {string} done what is said once it is done
   */
  async function act(call, done) {
    try {
      await call();
      status.textContent = done;
      await load();
    } catch (error) {
      status.textContent = error.message;
    }
  }

  /**
   * @param {HTMLElement} item
   * @param {Voice} voice
   */
  function rename(item, voice) {
    if (editing) return;
    editing = true;
    const input = h("input", { type: "text", class: "voice-input", maxlength: "64",
      value: voice.name, "aria-label": t("voices.rename_label", { name: voice.name }) });
    const shown = item.querySelector(".voice-name");
    if (!(shown instanceof HTMLElement)) return;
    editInPlace(shown, input, {
      closed: () => { editing = false; },
      save: async (close) => {
        await api.renameVoice(voice.id, input.value.trim());
        close();
        status.textContent = t("voices.renamed");
        await load();
      },
      failed: (error) => { status.textContent = error.message; },
    });
  }

  /**
   * @param {Voice} voice
   * @param {Voice[]} all
   */
  function row(voice, all) {
    const others = all.filter((other) => other.id !== voice.id);
    const target = h("select", { class: "voice-merge-target",
      "aria-label": t("voices.merge_label", { name: voice.name }) },
    others.map((other) => h("option", { value: other.id }, other.name)));
    const remove = h("button", { type: "button", class: "link voice-delete" },
      t("voices.delete"));
    remove.addEventListener("click", () => {
      // Two clicks: the first asks, the second deletes.
      if (remove.dataset.armed) {
        act(() => api.deleteVoice(voice.id), t("voices.deleted", { name: voice.name }));
      } else {
        remove.dataset.armed = "yes";
        remove.textContent = t("voices.delete_confirm", { name: voice.name });
      }
    });
    const item = h("li", { class: "voice", "data-voice": voice.id },
      h("span", { class: "voice-name" }, voice.name),
      h("span", { class: "voice-facts muted" }, t("voices.facts", {
        records: voice.records, talk: duration(voice.talk_ms), updated: when(voice.updated_at),
      })),
      h("button", { type: "button", class: "link voice-rename",
        onclick: () => rename(item, voice) }, t("voices.rename")),
      others.length ? h("span", { class: "voice-merge" }, target,
        h("button", { type: "button", class: "link",
          onclick: () => act(() => api.mergeVoice(voice.id, target.value),
            t("voices.merged", { name: voice.name })) }, t("voices.merge"))) : null,
      remove);
    return item;
  }

  async function load() {
    if (controller) controller.abort();
    controller = new AbortController();
    try {
      const answer = await api.voices(controller.signal);
      empty.hidden = answer.items.length > 0;
      if (!editing) replace(list, answer.items.map((voice) => row(voice, answer.items)));
    } catch (error) {
      if (error.name !== "AbortError") status.textContent = error.message;
    }
  }

  load();
  return () => { if (controller) controller.abort(); };
}
