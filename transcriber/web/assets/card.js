// A record card: where the record is in the pipeline, why it stopped (and a
// Resume button), the audio, the transcript with clickable times, downloads
// and the history. While the record moves the card is asked again after the
// server's `poll_after_ms`, never sooner, and only once the last answer came.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import {
  STAGES, STEP_LABELS, duration, haltLabel, isSettled, recordName, size, stageLabel, when,
} from "./format.js";
import { progressBar } from "./list.js";

const FALLBACK_POLL_MS = 4000;
const MAX_ERROR_POLL_MS = 60000;
// What the pipeline does after reaching each stage.
const WORK = {
  uploaded: "normalizing the audio",
  normalized: "sending it for recognition",
  submitted: "waiting for recognition",
  transcribed: "finishing",
};
const TRANSCRIPT_FORMATS = [
  ["txt", "Text"], ["srt", "SRT subtitles"], ["vtt", "WebVTT subtitles"], ["json", "JSON"],
];

// A stage names what has been achieved, so the step in progress (or the one
// that stopped) is the one leading to the next stage.
function stageTimeline(record) {
  const reached = STAGES.indexOf(record.stage);
  return h("ol", { class: "stages", "aria-label": "Progress" },
    STAGES.map((stage, index) => {
      let state = "pending";
      if (index <= reached) state = "achieved";
      else if (index === reached + 1) state = record.halt ? "halted" : "current";
      const note = { achieved: "done", current: "in progress", halted: "stopped here",
        pending: "not yet" }[state];
      return h("li", {
        class: `stage stage-${state}`,
        "aria-current": state === "current" || state === "halted" ? "step" : null,
        "data-stage": stage,
      }, h("span", { class: "stage-dot", "aria-hidden": "true" }),
      h("span", { class: "stage-name" }, stageLabel(stage)),
      h("span", { class: "visually-hidden" }, ` (${note})`));
    }));
}

function facts(record) {
  const rows = [
    ["Stage", record.halt ? `${stageLabel(record.stage)} · halted` : stageLabel(record.stage)],
    ["Duration", duration(record.duration_ms) || "not measured yet"],
    ["Size", size(record.size_bytes)],
    ["File", record.original_filename || "—"],
    ["Uploaded", h("time", { datetime: record.created_at }, when(record.created_at))],
    ["From", record.source === "telegram" ? "Telegram" : "Web upload"],
  ];
  return h("dl", { class: "facts" },
    rows.map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))));
}

function history(timeline) {
  if (!timeline.length) return h("p", { class: "muted" }, "Nothing has happened yet.");
  return h("table", { class: "history" },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "When"), h("th", { scope: "col" }, "Step"),
      h("th", { scope: "col" }, "Outcome"), h("th", { scope: "col" }, "Took"),
      h("th", { scope: "col" }, "By"))),
    h("tbody", {}, timeline.map((event) => h("tr", {},
      h("td", {}, h("time", { datetime: event.at }, when(event.at))),
      h("td", {}, STEP_LABELS[event.step] || event.step),
      h("td", {}, event.outcome),
      h("td", {}, event.duration_ms === null ? "" : `${(event.duration_ms / 1000).toFixed(1)} s`),
      h("td", {}, event.origin === "human" ? "a person" : "the pipeline")))));
}

export function renderCard(main, id) {
  let stopped = false;
  let timer = null;
  let inFlight = false;
  let again = false;
  let controller = null;
  let lastPollMs = FALLBACK_POLL_MS;
  let errorDelayMs = 0;
  let shownTranscript = null;
  let utteranceButtons = [];

  const title = h("h1", { tabindex: "-1" }, "Recording");
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" }, "Loading…");
  const progress = h("div", { class: "progress" });
  const halt = h("div", { class: "halt-slot" });
  const factsSlot = h("div");
  const audio = h("audio", { controls: true, preload: "metadata", class: "player" });
  const listen = h("section", { class: "panel", "aria-labelledby": "listen-h", hidden: true },
    h("h2", { id: "listen-h" }, "Listen"), audio);
  const downloads = h("ul", { class: "downloads" });
  const downloadPanel = h("section", { class: "panel", "aria-labelledby": "download-h",
    hidden: true }, h("h2", { id: "download-h" }, "Download"), downloads);
  const transcript = h("div", { class: "transcript" });
  const transcriptPanel = h("section", { class: "panel panel-wide",
    "aria-labelledby": "transcript-h", hidden: true },
  h("h2", { id: "transcript-h" }, "Transcript"), transcript);
  const historyBody = h("div");
  const historyPanel = h("details", { class: "panel panel-wide history-panel", hidden: true },
    h("summary", {}, "History"), historyBody);

  replace(main,
    h("p", { class: "back" }, h("a", { href: "/" }, "← All recordings")),
    title, status, progress, halt,
    h("div", { class: "card-grid" },
      h("section", { class: "panel", "aria-label": "Details" }, factsSlot),
      listen, downloadPanel, transcriptPanel, historyPanel));

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

  function seek(startMs) {
    audio.currentTime = startMs / 1000;
    const playing = audio.play();
    if (playing) playing.catch(() => {}); // autoplay rules or no audio device: the seek stays
  }

  function renderTranscript(record) {
    const key = JSON.stringify([record.transcript, record.utterances.length, !!record.halt]);
    if (key === shownTranscript) return;
    shownTranscript = key;
    if (record.utterances.length) {
      utteranceButtons = record.utterances.map((u) => h("button", {
        type: "button", class: "utterance", "data-start": u.start_ms, "data-end": u.end_ms,
        "aria-label": `Play from ${duration(u.start_ms)}: ${u.text}`,
        onclick: () => seek(u.start_ms),
      }, h("span", { class: "utterance-time" }, duration(u.start_ms)),
      h("span", { class: "utterance-text" }, u.text)));
      replace(transcript, h("ol", { class: "utterances" },
        utteranceButtons.map((button) => h("li", {}, button))));
    } else if (record.transcript) {
      utteranceButtons = [];
      replace(transcript, record.transcript.split("\n").map((line) => h("p", {}, line)));
    } else {
      utteranceButtons = [];
      replace(transcript, h("p", { class: "muted" }, record.halt
        ? "No transcript: processing stopped before recognition finished."
        : "The transcript appears here when recognition finishes."));
    }
  }

  function renderDownloads(record) {
    const items = [
      h("li", {}, h("a", { href: api.fileUrl(id, "original"), download: "" }, "Original file"),
        " ", h("span", { class: "muted" }, size(record.files?.original?.size_bytes))),
    ];
    if (record.files?.normalized) {
      items.push(h("li", {},
        h("a", { href: api.fileUrl(id, "normalized"), download: "" }, "Normalized copy (OGG Opus)"),
        " ", h("span", { class: "muted" }, size(record.files.normalized.size_bytes))));
    }
    if (record.utterances.length || record.transcript) {
      items.push(h("li", {}, "Transcript: ",
        TRANSCRIPT_FORMATS.map(([format, label], index) => [
          index ? ", " : "",
          h("a", { href: api.transcriptUrl(id, format), download: "",
            "data-format": format, title: label }, format.toUpperCase()),
        ])));
    }
    replace(downloads, items);
  }

  function renderHalt(record) {
    if (!record.halt) {
      halt.replaceChildren();
      return;
    }
    const button = h("button", { type: "button", class: "button button-primary" }, "Resume");
    const note = h("p", { class: "resume-note", "aria-live": "polite" });
    button.addEventListener("click", async () => {
      button.disabled = true;
      button.textContent = "Resuming…";
      try {
        await api.resume(id);
        note.textContent = "Resumed: processing continues from where it stopped.";
        schedule(0);
      } catch (error) {
        button.disabled = false;
        button.textContent = "Resume";
        replace(note, h("span", { class: "error-text" }, error.message));
        if (error.code === "not_halted") schedule(0);
      }
    });
    replace(halt, h("section", { class: "halt", "aria-labelledby": "halt-h" },
      h("h2", { id: "halt-h" }, "Processing stopped"),
      h("p", {}, h("strong", {}, haltLabel(record.halt.reason)),
        ` while ${WORK[record.stage] || "working"} · `,
        h("time", { datetime: record.halt.at }, when(record.halt.at))),
      record.halt.message ? h("p", { class: "halt-message" }, record.halt.message) : null,
      h("p", {}, "Resume to try again from the same stage."),
      h("div", { class: "actions" }, button), note));
  }

  function show(record) {
    document.title = `${recordName(record)} · Transcriber`;
    title.textContent = recordName(record);
    if (record.halt) status.textContent = "Processing stopped.";
    else if (record.stage === "done") status.textContent = "Done.";
    else status.textContent = `Working on it: ${WORK[record.stage] || "processing"}…`;
    replace(progress, stageTimeline(record),
      record.progress ? progressBar(record.progress) : null);
    replace(factsSlot, facts(record));
    renderHalt(record);
    setAudio(record);
    listen.hidden = false;
    renderDownloads(record);
    downloadPanel.hidden = false;
    renderTranscript(record);
    transcriptPanel.hidden = false;
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
      } else if (record.poll_after_ms !== null && !isSettled(record)) {
        lastPollMs = Math.max(record.poll_after_ms, 1);
        schedule(lastPollMs);
      }
    } catch (error) {
      if (stopped || error.name === "AbortError") return;
      if (error.status === 404) {
        document.title = "Not found · Transcriber";
        title.textContent = "Recording not found";
        replace(status, "There is no such recording in your archive. ",
          h("a", { href: "/" }, "Back to your recordings"));
        return;
      }
      // Try again later, slower each time, never sooner than the server allows.
      errorDelayMs = Math.min(Math.max(errorDelayMs * 2, lastPollMs), MAX_ERROR_POLL_MS);
      const wait = Math.max(errorDelayMs, (error.retryAfterSeconds || 0) * 1000);
      replace(status, h("span", { class: "error-text" },
        `${error.message} Trying again in ${Math.round(wait / 1000)} s.`));
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
    audio.pause();
  };
}
