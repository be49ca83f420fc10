// @ts-check
// The transcript's quality report on the card (docs/webapp.md, "Quality"): a
// plain banner when the verdict is not `good`, naming the unclear stretches,
// each a link that plays the recording from there; and the words the
// recognizer was unsure of, underlined in the transcript unless the person
// turned that off on the settings page (remembered in this browser).

import { h } from "./dom.js";
import { duration } from "./format.js";
import { t } from "./i18n.js";

// The same threshold as the server's (transcriber/quality.py LOW_WORD_PROBABILITY).
/** @typedef {import("./types.js").Quality} Quality */
/** @typedef {import("./types.js").Span} Span */
/** @typedef {import("./types.js").Utterance} Utterance */
/** @typedef {import("./types.js").RecordSummary} RecordSummary */
/** @typedef {import("./dom.js").Child} Child */
/** @typedef {(startMs: number) => void} Seek */

export const LOW_WORD_PROBABILITY = 0.5;
const UNDERLINE_KEY = "transcriber.underline_unsure";

/** Whether low-confidence words are underlined (on unless turned off). */
export function underlineUnsure() {
  try {
    return window.localStorage.getItem(UNDERLINE_KEY) !== "off";
  } catch {
    return true; // storage refused (privacy mode): the default
  }
}

/** @param {boolean} on */
export function setUnderlineUnsure(on) {
  try {
    window.localStorage.setItem(UNDERLINE_KEY, on ? "on" : "off");
  } catch {
    // storage refused: the setting lasts until the page is left
  }
}

/** The settings page's section: one checkbox. */
export function qualitySettings() {
  const box = h("input", { type: "checkbox", id: "underline-unsure",
    checked: underlineUnsure() });
  box.addEventListener("change", () => setUnderlineUnsure(box.checked));
  return h("section", { class: "panel", "aria-labelledby": "display-heading" },
    h("h2", { id: "display-heading" }, t("settings.display")),
    h("p", {}, box, " ", h("label", { for: "underline-unsure" }, t("quality.underline_setting"))),
    h("p", { class: "muted" }, t("quality.underline_hint")));
}

/**
 * @param {Span[]} spans
 * @param {Seek} seek
 */
function spanLinks(spans, seek) {
  /** @type {Child[]} */
  const links = [];
  spans.forEach((span, index) => {
    if (index) links.push(", ");
    const text = `${duration(span.start_ms)}–${duration(span.end_ms)}`;
    links.push(h("a", { href: `#t=${span.start_ms}`, class: "unclear-span",
      "data-start": span.start_ms, title: t("quality.play_span", { time: text }),
      onclick: (/** @type {Event} */ event) => {
        event.preventDefault();
        seek(span.start_ms);
      } }, text));
  });
  return links;
}

/**
 * The banner for a report whose verdict is not `good`; null otherwise.
 * @param {Quality | null | undefined} quality
 * @param {Seek} seek
 */
export function qualityBanner(quality, seek) {
  if (!quality || quality.verdict === "good") return null;
  const reasons = quality.reasons || [];
  const spans = quality.unclear_spans || [];
  /** @type {Child[]} */
  let line;
  if (reasons.includes("no_text")) {
    line = [t("quality.no_text")];
  } else if (spans.length) {
    line = [t(quality.verdict === "poor" ? "quality.poor_spans" : "quality.unclear_spans"),
      " ", spanLinks(spans, seek), t("quality.listen_there")];
  } else {
    line = [t("quality.unsure")];
  }
  const why = reasons.map((reason) => t(`quality.reason.${reason}`));
  return h("section", { class: `quality-banner quality-${quality.verdict}`, role: "note",
    "aria-label": t("quality.heading") },
  h("p", {}, line), why.length ? h("p", { class: "muted" }, why.join(" ")) : null);
}

/**
 * An utterance's text: its words, each a span that knows its start (a click on a word
 * plays from it, card-transcript.js), those the recognizer was unsure of underlined
 * (when the setting is on); the plain text when the words do not spell it (a
 * correction, or a recognizer that gave none).
 * @param {Utterance} u
 * @returns {Child}
 */
export function utteranceText(u) {
  const words = u.words || [];
  if (!words.length || words.map((w) => w.text).join("").trim() !== u.text.trim()) return u.text;
  const underline = underlineUnsure();
  return words.map((w, index) => {
    const text = index ? w.text : w.text.trimStart();
    const unsure = underline && w.probability !== null && w.probability < LOW_WORD_PROBABILITY;
    return h("span", { class: unsure ? "word unsure" : "word", "data-start": w.start_ms,
      title: unsure ? t("quality.unsure_word") : null }, text);
  });
}

/**
 * The list's small mark: shown when the verdict is `check` or `poor`.
 * @param {RecordSummary} record
 */
export function qualityMark(record) {
  const verdict = record.quality_verdict;
  if (verdict !== "check" && verdict !== "poor") return null;
  return h("span", { class: `quality-mark quality-${verdict}`,
    title: t(`quality.mark_${verdict}`), "aria-label": t(`quality.mark_${verdict}`) }, "⚠");
}
