// @ts-check
// A record card, put together from its parts: where the record is in the
// pipeline (card-facts.js), why it stopped and a Resume button
// (card-halt.js), the quality banner (card-quality.js), the player
// (card-player.js), downloads (card-downloads.js), the speakers
// (speakers.js), the transcript with clickable times and corrections in
// place (card-transcript.js) and its find box (card-find.js), and the
// history. The owner edits the title, brief and topics (card-edit.js), marked
// when the describer wrote them, transcribes again or deletes. While the
// record moves the card is asked again (card-poll.js). Opened with
// `?t=<ms>&u=<index>` (a search result's line) it plays from that moment and
// highlights that utterance.

import { downloadPanel } from "./card-downloads.js";
import { editors } from "./card-edit.js";
import { facts, history, stageTimeline, work } from "./card-facts.js";
import { findBox } from "./card-find.js";
import { haltSlot } from "./card-halt.js";
import { askedMoment, momentLine, player } from "./card-player.js";
import { cardPoller } from "./card-poll.js";
import { qualityBanner } from "./card-quality.js";
import { sharePanel } from "./card-share.js";
import { transcriptView } from "./card-transcript.js";
import { h, replace } from "./dom.js";
import { isAutomatic, recordName } from "./format.js";
import { t } from "./i18n.js";
import { progressBar } from "./list.js";
import { speakerPanel } from "./speakers.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */

/**
 * Draw the card of record `id` into `main`; returns the view's cleanup.
 * @param {HTMLElement} main
 * @param {string} id
 * @param {{navigate?: (url: string) => void, params?: URLSearchParams}} [context]
 * @returns {() => void}
 */
export function renderCard(main, id, { navigate, params } = {}) {
  /** @type {RecordCard | null} */
  let current = null;
  let moment = askedMoment(params); // played once the transcript is there

  const title = h("h1", { tabindex: "-1" }, t("card.heading"));
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" },
    t("common.loading"));
  const progress = h("div", { class: "progress" });
  const qualitySlot = h("div", { class: "quality-slot" });
  const factsSlot = h("div");
  const transcriptNote = h("p", { class: "transcript-note", "aria-live": "polite" });
  const poller = cardPoller({
    id,
    shown: (record) => show(record),
    gone: () => {
      document.title = t("title.not_found");
      title.textContent = t("card.not_found");
      replace(status, t("card.not_found_text"),
        h("a", { href: "/" }, t("common.back_to_list")));
    },
    failed: (error, waitMs) => replace(status, h("span", { class: "error-text" },
      t("card.retrying", { message: error.message, seconds: Math.round(waitMs / 1000) }))),
  });
  const halt = haltSlot({ id, refresh: poller.refresh });
  const lines = transcriptView({
    id, note: transcriptNote, revision: () => current?.revision ?? 0,
    seek: (startMs) => listen.seek(startMs),
    saved: (record) => show(record), stale: poller.refresh,
  });
  const listen = player({ id, lines: lines.buttons });
  const downloads = downloadPanel(id);
  const share = sharePanel(id, { changed: () => poller.refresh() });
  // A question about this recording only: the Ask page, scoped to it.
  const askInput = h("input", { type: "text", id: "card-ask", maxlength: 1000 });
  const askBox = h("form", { class: "panel ask-box" },
    h("label", { for: "card-ask" }, t("card.ask_label")), " ", askInput, " ",
    h("button", { type: "submit", class: "button" }, t("ask.submit")));
  askBox.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = askInput.value.trim();
    if (!question) return;
    const url = `/ask?record=${encodeURIComponent(id)}&q=${encodeURIComponent(question)}`;
    if (navigate) navigate(url);
    else window.location.assign(url);
  });
  const find = findBox({ id, transcript: lines.element, seek: listen.seek,
    showLine: lines.showLine, revision: () => current?.revision });
  const transcriptPanel = h("section", { class: "panel transcript-panel",
    "aria-labelledby": "transcript-h", hidden: true },
  h("h2", { id: "transcript-h" }, t("card.transcript")), find.element, lines.element,
  transcriptNote);
  const speakers = speakerPanel({ id, note: transcriptNote, saved: (record) => show(record) });
  const historyBody = h("div");
  const historyPanel = h("details", { class: "panel history-panel", hidden: true },
    h("summary", {}, t("card.history")), historyBody);
  const edit = editors({
    id, title, t,
    saved: (record) => show(record),
    retranscribed: poller.refresh,
    deleted: () => (navigate ? navigate("/") : window.location.assign("/")),
  });

  // Built around the transcript: it comes first and takes the width, under a player
  // that stays in view; the details, brief, topics, downloads and speakers are a
  // compact side panel (below the transcript on a phone); the history last.
  replace(main,
    h("p", { class: "back" }, h("a", { href: "/" }, t("card.back"))),
    h("div", { class: "title-row" }, title, edit.titleMark, edit.titleButton), edit.titleForm,
    status, progress, halt.element, qualitySlot,
    h("div", { class: "card-layout" }, listen.panel, transcriptPanel,
      h("aside", { class: "card-side", "aria-label": t("card.details") },
        h("section", { class: "panel card-details" }, factsSlot, edit.panel),
        downloads.panel, share.panel, askBox, speakers.panel),
      historyPanel));

  // A search result's line: play from its moment, that utterance highlighted.
  /** @param {RecordCard} record */
  function playMoment(record) {
    if (!moment || !record.utterances.length) return;
    const asked = moment;
    moment = null;
    const line = momentLine(record, asked);
    if (line) {
      find.outline(line.index);
      lines.showLine(line.index);
    }
    const from = asked.startMs ?? line?.start_ms;
    if (from !== null && from !== undefined) listen.seek(from);
  }

  /** @param {RecordCard} record */
  function show(record) {
    current = record;
    document.title = t("title.record", { name: recordName(record) });
    title.textContent = recordName(record);
    title.classList.toggle("automatic", isAutomatic(record, "title"));
    edit.show(record);
    if (record.halt) status.textContent = t("card.stopped");
    else if (record.stage === "done") status.textContent = t("card.done");
    else status.textContent = t("card.working", { work: work(record.stage) });
    replace(progress, stageTimeline(record),
      record.progress ? progressBar(record.progress) : null);
    replace(factsSlot, facts(record));
    halt.show(record);
    replace(qualitySlot, qualityBanner(record.quality, listen.seek));
    listen.show(record);
    downloads.show(record);
    share.show(record);
    speakers.show(record);
    if (lines.show(record)) {
      find.redrawn(new Map(record.utterances.map((u) => [u.index, u.text])));
    }
    find.element.hidden = !record.utterances.length;
    transcriptPanel.hidden = false;
    playMoment(record);
    // A correction moved the transcript on: the find box asks again.
    find.recheck();
    replace(historyBody, history(record.timeline));
    historyPanel.hidden = false;
  }

  poller.refresh();
  return () => {
    poller.stop();
    find.stop();
    listen.stop();
  };
}
