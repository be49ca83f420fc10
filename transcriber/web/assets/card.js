// A record card: where the record is in the pipeline, why it stopped (and a
// Resume button), the audio, the transcript with clickable times, downloads
// and the history. While the record moves the card is asked again after the
// server's `poll_after_ms`, never sooner, and only once the last answer came.
// The owner edits the title, brief and topics (card-edit.js), corrects an
// utterance in place, names the speakers and moves a line to another one
// (speakers.js), transcribes again or deletes. What the describer wrote (the
// title, brief and topics, `described`) is marked as such, with a way to keep it.
// Opened with `?t=<ms>&u=<index>` (a search result's line) it plays from that
// moment and highlights that utterance; the find box above the transcript
// (card-find.js) marks the utterances holding a query's words and steps
// through them. A transcript not to be trusted says so in a banner, its unclear
// stretches links that play from there; unsure words are underlined (card-quality.js).

import * as api from "./api.js";
import { editors } from "./card-edit.js";
import { facts, history, stageTimeline, work } from "./card-facts.js";
import { findBox } from "./card-find.js";
import { qualityBanner, utteranceText } from "./card-quality.js";
import { editInPlace, h, replace } from "./dom.js";
import {
  duration, haltLabel, isAutomatic, isSettled, recordName, size, when,
} from "./format.js";
import { t } from "./i18n.js";
import { progressBar } from "./list.js";
import { colourClass, lineSpeaker, speakerPanel } from "./speakers.js";

const FALLBACK_POLL_MS = 4000;
const MAX_ERROR_POLL_MS = 60000;
const TRANSCRIPT_FORMATS = ["txt", "srt", "vtt", "json"];

/** The moment `?t=<ms>&u=<index>` asks to play: {startMs, index}, either null; or null. */
function askedMoment(params) {
  const read = (name) => {
    const value = params?.get(name);
    return value && /^\d+$/.test(value) ? Number(value) : null;
  };
  const startMs = read("t");
  const index = read("u");
  return startMs === null && index === null ? null : { startMs, index };
}

export function renderCard(main, id, { navigate, params } = {}) {
  let stopped = false;
  let timer = null;
  let inFlight = false;
  let again = false;
  let controller = null;
  let lastPollMs = FALLBACK_POLL_MS;
  let errorDelayMs = 0;
  let shownTranscript = null;
  let utteranceButtons = [];
  let current = null;
  let editing = 0; // utterance editors open: the transcript is not redrawn under them
  let moment = askedMoment(params); // played once the transcript is there

  const title = h("h1", { tabindex: "-1" }, t("card.heading"));
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" },
    t("common.loading"));
  const progress = h("div", { class: "progress" });
  const halt = h("div", { class: "halt-slot" });
  const qualitySlot = h("div", { class: "quality-slot" });
  const factsSlot = h("div");
  const audio = h("audio", { controls: true, preload: "metadata", class: "player" });
  const listen = h("section", { class: "panel", "aria-labelledby": "listen-h", hidden: true },
    h("h2", { id: "listen-h" }, t("card.listen")), audio);
  const downloads = h("ul", { class: "downloads" });
  const downloadPanel = h("section", { class: "panel", "aria-labelledby": "download-h",
    hidden: true }, h("h2", { id: "download-h" }, t("card.download")), downloads);
  const transcript = h("div", { class: "transcript" });
  // `seek` and `showLine` are declared below (hoisted); `current` is read only once asked.
  const find = findBox({ id, transcript, seek, showLine, revision: () => current?.revision });
  const transcriptPanel = h("section", { class: "panel panel-wide",
    "aria-labelledby": "transcript-h", hidden: true },
  h("h2", { id: "transcript-h" }, t("card.transcript")), find.element, transcript);
  const transcriptNote = h("p", { class: "transcript-note", "aria-live": "polite" });
  transcriptPanel.append(transcriptNote);
  const speakers = speakerPanel({ id, note: transcriptNote, saved: (record) => show(record) });
  const historyBody = h("div");
  const historyPanel = h("details", { class: "panel panel-wide history-panel", hidden: true },
    h("summary", {}, t("card.history")), historyBody);
  const edit = editors({
    id, title, t,
    saved: (record) => show(record),
    retranscribed: () => schedule(0),
    deleted: () => (navigate ? navigate("/") : window.location.assign("/")),
  });

  replace(main,
    h("p", { class: "back" }, h("a", { href: "/" }, t("card.back"))),
    h("div", { class: "title-row" }, title, edit.titleMark, edit.titleButton), edit.titleForm,
    status, progress, halt, qualitySlot,
    h("div", { class: "card-grid" },
      h("section", { class: "panel", "aria-label": t("card.details") }, factsSlot, edit.panel),
      listen, downloadPanel, speakers.panel, transcriptPanel, historyPanel));

  // The normalized copy is smaller and always playable; the original is the fallback.
  let audioCopy = null;
  function setAudio(record) {
    const wanted = record.files?.normalized ? "normalized" : "original";
    const untouched = audio.paused && audio.currentTime === 0;
    if (audioCopy === wanted || (audioCopy !== null && !untouched)) return;
    audioCopy = wanted;
    audio.src = api.fileUrl(id, wanted);
  }
  audio.addEventListener("error", () => {
    if (audioCopy === "normalized") {
      audioCopy = "original";
      audio.src = api.fileUrl(id, "original");
    }
  });
  audio.addEventListener("timeupdate", () => {
    const ms = audio.currentTime * 1000;
    for (const button of utteranceButtons) {
      const on = ms >= Number(button.dataset.start) && ms < Number(button.dataset.end);
      button.classList.toggle("speaking", on);
      if (on) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    }
  });

  function seek(startMs, { play = true } = {}) {
    audio.currentTime = startMs / 1000;
    if (audio.readyState === HTMLMediaElement.HAVE_NOTHING) {
      // Before the metadata a browser may drop the position: set it again once known.
      audio.addEventListener("loadedmetadata", () => {
        audio.currentTime = startMs / 1000;
      }, { once: true });
    }
    if (!play) return;
    const playing = audio.play();
    if (playing) playing.catch(() => {}); // autoplay rules or no audio device: the seek stays
  }

  function lineOf(index) {
    return transcript.querySelector(`.utterances > li[data-index="${index}"]`);
  }

  function showLine(index) {
    lineOf(index)?.scrollIntoView({ block: "center" });
  }

  // A search result's line: play from its moment, that utterance highlighted.
  function playMoment(record) {
    if (!moment || !record.utterances.length) return;
    const { startMs, index } = moment;
    moment = null;
    const line = index !== null ? record.utterances.find((u) => u.index === index)
      : record.utterances.find((u) => startMs >= u.start_ms && startMs < u.end_ms);
    if (line) {
      find.outline(line.index);
      showLine(line.index);
    }
    const from = startMs ?? line?.start_ms;
    if (from !== null && from !== undefined) seek(from);
  }

  // Click the text, type, Enter saves (a new revision), Esc cancels. A
  // correction made on an older revision is refused (409) and said so.
  function editUtterance(item, u) {
    if (item.querySelector("input")) return;
    editing += 1;
    const input = h("input", { type: "text", class: "utterance-input", value: u.text,
      "aria-label": t("transcript.edit_label", { time: duration(u.start_ms) }) });
    editInPlace(item.querySelector(".utterance-text-edit"), input, {
      closed: () => { editing -= 1; },
      save: async (close) => {
        const record = await api.correctTranscript(id, current.revision,
          [{ index: u.index, text: input.value }]);
        close();
        transcriptNote.textContent = t("transcript.saved");
        shownTranscript = null;
        show(record);
      },
      failed: (error, close) => {
        transcriptNote.textContent = error.code === "conflict"
          ? t("transcript.conflict") : error.message;
        if (error.code === "conflict") {
          close();
          shownTranscript = null;
          schedule(0);
        }
      },
    });
  }

  async function moveLine(u, speaker, select) {
    select.disabled = true;
    try {
      const record = await api.correctTranscript(id, current.revision,
        [{ index: u.index, speaker }]);
      transcriptNote.textContent = t("transcript.saved");
      shownTranscript = null;
      show(record);
    } catch (error) {
      select.disabled = false;
      transcriptNote.textContent = error.code === "conflict"
        ? t("transcript.conflict") : error.message;
      shownTranscript = null;
      schedule(0);
    }
  }

  function renderTranscript(record) {
    const key = JSON.stringify([record.transcript, record.utterances.length, !!record.halt,
      record.revision, record.speakers]);
    if (key === shownTranscript || editing) return;
    shownTranscript = key;
    if (record.utterances.length) {
      const items = record.utterances.map((u) => {
        const button = h("button", {
          type: "button", class: "utterance", "data-start": u.start_ms, "data-end": u.end_ms,
          "aria-label": t("transcript.play_from", { time: duration(u.start_ms), text: u.text }),
          onclick: () => seek(u.start_ms),
        }, h("span", { class: "utterance-time" }, duration(u.start_ms)),
        h("span", { class: "utterance-text" }, utteranceText(u)));
        const item = h("li", { "data-index": u.index,
          class: u.speaker ? `speaker-line ${colourClass(u.speaker)}` : null },
        lineSpeaker(record, u, { move: moveLine }), button);
        const fix = h("span", { class: "utterance-text-edit", role: "button", tabindex: "0",
          title: t("transcript.edit_hint") }, t("transcript.edit"));
        fix.addEventListener("click", () => editUtterance(item, u));
        fix.addEventListener("keydown", (event) => {
          if (event.key === "Enter") editUtterance(item, u);
        });
        item.append(fix);
        return { button, item };
      });
      utteranceButtons = items.map((x) => x.button);
      replace(transcript, h("ol", { class: "utterances" }, items.map((x) => x.item)));
      find.redrawn(new Map(record.utterances.map((u) => [u.index, u.text])));
    } else if (record.transcript) {
      utteranceButtons = [];
      replace(transcript, record.transcript.split("\n").map((line) => h("p", {}, line)));
    } else {
      utteranceButtons = [];
      replace(transcript, h("p", { class: "muted" }, record.halt
        ? t("transcript.none_halted") : t("transcript.pending")));
    }
  }

  function renderDownloads(record) {
    const items = [
      h("li", {}, h("a", { href: api.fileUrl(id, "original"), download: "" },
        t("download.original")),
        " ", h("span", { class: "muted" }, size(record.files?.original?.size_bytes))),
    ];
    if (record.files?.normalized) {
      items.push(h("li", {},
        h("a", { href: api.fileUrl(id, "normalized"), download: "" }, t("download.normalized")),
        " ", h("span", { class: "muted" }, size(record.files.normalized.size_bytes))));
    }
    if (record.utterances.length || record.transcript) {
      items.push(h("li", {}, t("download.transcript"),
        TRANSCRIPT_FORMATS.map((format, index) => [
          index ? ", " : "",
          h("a", { href: api.transcriptUrl(id, format), download: "",
            "data-format": format, title: t(`format.${format}`) }, format.toUpperCase()),
        ])));
    }
    replace(downloads, items);
  }

  function renderHalt(record) {
    if (!record.halt) {
      halt.replaceChildren();
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
        schedule(0);
      } catch (error) {
        button.disabled = false;
        button.textContent = t("halt.resume");
        replace(note, h("span", { class: "error-text" }, error.message));
        if (error.code === "not_halted") schedule(0);
      }
    });
    replace(halt, h("section", { class: "halt", "aria-labelledby": "halt-h" },
      h("h2", { id: "halt-h" }, t("halt.heading")),
      h("p", {}, h("strong", {}, haltLabel(record.halt.reason)),
        t("halt.while", { work: work(record.stage) }),
        h("time", { datetime: record.halt.at }, when(record.halt.at))),
      record.halt.message ? h("p", { class: "halt-message" }, record.halt.message) : null,
      h("p", {}, t("halt.hint")),
      h("div", { class: "actions" }, button), note));
  }

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
    renderHalt(record);
    replace(qualitySlot, qualityBanner(record.quality, seek));
    setAudio(record);
    listen.hidden = false;
    renderDownloads(record);
    downloadPanel.hidden = false;
    speakers.show(record);
    renderTranscript(record);
    find.element.hidden = !record.utterances.length;
    transcriptPanel.hidden = false;
    playMoment(record);
    // A correction moved the transcript on: the find box asks again.
    find.recheck();
    replace(historyBody, history(record.timeline));
    historyPanel.hidden = false;
  }

  function schedule(delayMs) {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(refresh, delayMs);
  }

  // One request at a time: a refresh asked for meanwhile (Resume) follows it.
  async function refresh() {
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    controller = new AbortController();
    try {
      const record = await api.card(id, controller.signal);
      if (stopped) return;
      errorDelayMs = 0;
      show(record);
      if (again) {
        again = false;
        schedule(0);
      } else if (record.poll_after_ms !== null
        && (!isSettled(record) || record.described?.state === "pending")) {
        lastPollMs = Math.max(record.poll_after_ms, 1);
        schedule(lastPollMs);
      }
    } catch (error) {
      if (stopped || error.name === "AbortError") return;
      if (error.status === 404) {
        document.title = t("title.not_found");
        title.textContent = t("card.not_found");
        replace(status, t("card.not_found_text"),
          h("a", { href: "/" }, t("common.back_to_list")));
        return;
      }
      // Try again later, slower each time, never sooner than the server allows.
      errorDelayMs = Math.min(Math.max(errorDelayMs * 2, lastPollMs), MAX_ERROR_POLL_MS);
      const wait = Math.max(errorDelayMs, (error.retryAfterSeconds || 0) * 1000);
      replace(status, h("span", { class: "error-text" },
        t("card.retrying", { message: error.message, seconds: Math.round(wait / 1000) })));
      schedule(wait);
    } finally {
      inFlight = false;
    }
  }

  refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
    controller?.abort();
    find.stop();
    audio.pause();
  };
}
