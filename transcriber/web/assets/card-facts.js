// @ts-check
// The card's read-only parts, drawn from the record as it is: the chain of
// stages, the facts beside the player and the history of its steps. Kept
// apart from card.js, which holds the card's state, polling and editing.

import { h } from "./dom.js";
import {
  STAGES, duration, size, stageLabel, stepLabel, when,
} from "./format.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */
/** @typedef {import("./types.js").TimelineEvent} TimelineEvent */

// What the pipeline does after reaching each stage.
const WORKING = ["uploaded", "normalized", "submitted", "transcribed"];
/** @param {string} stage */
export function work(stage) {
  return WORKING.includes(stage) ? t(`work.${stage}`) : t("work.other");
}

// A stage names what has been achieved, so the step in progress (or the one
// that stopped) is the one leading to the next stage.
/** @param {RecordCard} record */
export function stageTimeline(record) {
  const reached = STAGES.indexOf(record.stage);
  return h("ol", { class: "stages", "aria-label": t("card.progress") },
    STAGES.map((stage, index) => {
      let state = "pending";
      if (index <= reached) state = "achieved";
      else if (index === reached + 1) state = record.halt ? "halted" : "current";
      const note = t(`stage_note.${state}`);
      return h("li", {
        class: `stage stage-${state}`,
        "aria-current": state === "current" || state === "halted" ? "step" : null,
        "data-stage": stage,
      }, h("span", { class: "stage-dot", "aria-hidden": "true" }),
      h("span", { class: "stage-name" }, stageLabel(stage)),
      h("span", { class: "visually-hidden" }, ` (${note})`));
    }));
}

/** @param {RecordCard} record */
export function facts(record) {
  const language = record.language || { requested: "auto", detected: null };
  // "auto" is the API's word; a person reads what the upload form called it.
  const requested = language.requested === "auto" ? t("spoken.auto") : language.requested;
  const rows = [
    [t("facts.stage"), record.halt ? t("facts.stage_halted", { stage: stageLabel(record.stage) })
      : stageLabel(record.stage)],
    [t("facts.duration"), duration(record.duration_ms) || t("facts.not_measured")],
    [t("facts.size"), size(record.size_bytes)],
    [t("facts.file"), record.original_filename || "—"],
    [t("facts.uploaded"), h("time", { datetime: record.created_at }, when(record.created_at))],
    [t("facts.from"), from(record)],
    [t("facts.language"), language.detected
      ? t("facts.language_detected", { requested, detected: language.detected })
      : requested],
  ];
  if (record.model) rows.push([t("facts.model"), record.model]);
  // The hidden ": " keeps term and value apart where the layout does not: copied
  // text, a reader mode, a screen reader («Длительность2:13» read as one word).
  return h("dl", { class: "facts" },
    rows.map(([term, value]) => h("div", {},
      h("dt", {}, term, h("span", { class: "visually-hidden" }, ": ")), h("dd", {}, value))));
}

// How the record came in: Telegram, or for the other door its `via` (the web app,
// an API client, the command line, the watched folder; none on older records).
/** @param {RecordCard} record */
function from(record) {
  if (record.source === "telegram") return t("facts.telegram");
  return t(`facts.${record.via || "web"}`);
}

/** @param {TimelineEvent[]} timeline */
export function history(timeline) {
  if (!timeline.length) return h("p", { class: "muted" }, t("history.empty"));
  return h("table", { class: "history" },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, t("history.when")), h("th", { scope: "col" }, t("history.step")),
      h("th", { scope: "col" }, t("history.outcome")), h("th", { scope: "col" }, t("history.took")),
      h("th", { scope: "col" }, t("history.by")))),
    h("tbody", {}, timeline.map((event) => h("tr", {},
      h("td", {}, h("time", { datetime: event.at }, when(event.at))),
      h("td", {}, stepLabel(event.step)),
      h("td", {}, t(`outcome.${event.outcome}`)),
      h("td", {}, event.duration_ms === null ? ""
        : t("history.seconds", { seconds: (event.duration_ms / 1000).toFixed(1) })),
      h("td", {}, by(event))))));
}

// Who did it: the person's login when the journal names them; someone with a link
// opened it; the pipeline's own steps.
/** @param {TimelineEvent} event */
function by(event) {
  if (event.by) return event.by;
  if (event.step === "link_opened") return t("history.link_visitor");
  return event.origin === "human" ? t("history.person") : t("history.pipeline");
}
