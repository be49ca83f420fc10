// A record card: where the record is in the pipeline, why it stopped (and a
// Resume button), the audio, the transcript with clickable times, downloads
// and the history. While the record moves the card is asked again after the
// server's `poll_after_ms`, never sooner, and only once the last answer came.
// The owner edits the title, brief and topics (card-edit.js), corrects an
// utterance in place, names the speakers and moves a line to another one
// (speakers.js), transcribes again or deletes.
// Opened with `?t=<ms>&u=<index>` (a search result's line) it plays from that
// moment and highlights that utterance; the find box above the transcript
// marks the utterances holding a query's words and steps through them.

import * as api from "./api.js";
import { editors } from "./card-edit.js";
import { editInPlace, h, replace } from "./dom.js";
import {
  STAGES, duration, haltLabel, isSettled, recordName, size, stageLabel, stepLabel, when,
} from "./format.js";
import { t } from "./i18n.js";
import { markedText, progressBar, searchAsTyped } from "./list.js";
import { colourClass, lineSpeaker, speakerPanel } from "./speakers.js";

const FALLBACK_POLL_MS = 4000;
const MAX_ERROR_POLL_MS = 60000;
// What the pipeline does after reaching each stage.
const WORKING = ["uploaded", "normalized", "submitted", "transcribed"];
function work(stage) {
  return WORKING.includes(stage) ? t(`work.${stage}`) : t("work.other");
}
const TRANSCRIPT_FORMATS = ["txt", "srt", "vtt", "json"];
const FIND_PAUSE_MS = 300;
const CUT = "\u2026"; // what marks a snippet's cut end

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

/**
 * A match's marks in the utterance's whole `text` ([start, end) in code
 * points): its snippet may be a window of it with `…` at a cut end. Marks
 * that do not fall on the same words (the text changed since) are left out.
 */
function marksInText(text, match) {
  const full = Array.from(text);
  const snippet = Array.from(match.snippet);
  let shift = null;
  if (match.snippet === text) shift = 0;
  else {
    const heads = snippet[0] === CUT ? [1, 0] : [0];
    const tails = snippet[snippet.length - 1] === CUT ? [1, 0] : [0];
    search: for (const head of heads) {
      for (const tail of tails) {
        const core = snippet.slice(head, snippet.length - tail).join("");
        const at = core ? text.indexOf(core) : -1;
        if (at >= 0) {
          shift = Array.from(text.slice(0, at)).length - head;
          break search;
        }
      }
    }
  }
  if (shift === null) return [];
  return match.marks.map(([start, end]) => [start + shift, end + shift])
    .filter(([start, end], i) => start >= 0 && end <= full.length
      && full.slice(start, end).join("")
        === snippet.slice(match.marks[i][0], match.marks[i][1]).join(""));
}

// A stage names what has been achieved, so the step in progress (or the one
// that stopped) is the one leading to the next stage.
function stageTimeline(record) {
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

function facts(record) {
  const language = record.language || { requested: "auto", detected: null };
  const rows = [
    [t("facts.stage"), record.halt ? t("facts.stage_halted", { stage: stageLabel(record.stage) })
      : stageLabel(record.stage)],
    [t("facts.duration"), duration(record.duration_ms) || t("facts.not_measured")],
    [t("facts.size"), size(record.size_bytes)],
    [t("facts.file"), record.original_filename || "—"],
    [t("facts.uploaded"), h("time", { datetime: record.created_at }, when(record.created_at))],
    [t("facts.from"), record.source === "telegram" ? t("facts.telegram") : t("facts.web")],
    [t("facts.language"), language.detected
      ? t("facts.language_detected", { requested: language.requested,
        detected: language.detected })
      : language.requested],
  ];
  return h("dl", { class: "facts" },
    rows.map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))));
}

function history(timeline) {
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
      h("td", {}, event.origin === "human" ? t("history.person") : t("history.pipeline"))))));
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
  let foundIndex = null; // the utterance highlighted (.utterance-found)
  let texts = new Map(); // utterance index → its text as drawn
  // The find box: what was asked (on which revision) and the matches it answered.
  const find = { asked: "", revision: null, matches: [], at: -1, timer: null,
    controller: null };

  const title = h("h1", { tabindex: "-1" }, t("card.heading"));
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" },
    t("common.loading"));
  const progress = h("div", { class: "progress" });
  const halt = h("div", { class: "halt-slot" });
  const factsSlot = h("div");
  const audio = h("audio", { controls: true, preload: "metadata", class: "player" });
  const listen = h("section", { class: "panel", "aria-labelledby": "listen-h", hidden: true },
    h("h2", { id: "listen-h" }, t("card.listen")), audio);
  const downloads = h("ul", { class: "downloads" });
  const downloadPanel = h("section", { class: "panel", "aria-labelledby": "download-h",
    hidden: true }, h("h2", { id: "download-h" }, t("card.download")), downloads);
  const transcript = h("div", { class: "transcript" });
  const findInput = h("input", { id: "find", type: "search", autocomplete: "off",
    maxlength: "200", placeholder: t("find.placeholder") });
  const findPrevious = h("button", { type: "button", class: "button-quiet find-previous",
    title: t("find.previous_hint"), disabled: true }, t("find.previous"));
  const findNext = h("button", { type: "button", class: "button-quiet find-next",
    title: t("find.next_hint"), disabled: true }, t("find.next"));
  const findCount = h("span", { class: "find-count", "aria-live": "polite",
    "aria-atomic": "true" });
  const findBar = h("div", { class: "find", role: "search", hidden: true },
    h("label", { for: "find" }, t("find.label")),
    h("div", { class: "find-row" }, findInput, findPrevious, findNext, findCount));
  const transcriptPanel = h("section", { class: "panel panel-wide",
    "aria-labelledby": "transcript-h", hidden: true },
  h("h2", { id: "transcript-h" }, t("card.transcript")), findBar, transcript);
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
    h("div", { class: "title-row" }, title, edit.titleButton), edit.titleForm,
    status, progress, halt,
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

  // The find state on the lines drawn: matches marked, the current one found.
  // Runs after every redraw, so it outlives them.
  function applyFind() {
    const byIndex = new Map(find.matches.map((match) => [match.utterance_index, match]));
    for (const line of transcript.querySelectorAll(".utterances > li")) {
      const index = Number(line.dataset.index);
      const match = byIndex.get(index);
      line.classList.toggle("utterance-match", !!match);
      line.classList.toggle("utterance-found", index === foundIndex);
      const text = line.querySelector(".utterance-text");
      if (!text || !texts.has(index)) continue;
      if (match) replace(text, markedText(texts.get(index), marksInText(texts.get(index), match)));
      else if (text.querySelector("mark")) replace(text, texts.get(index));
    }
  }

  function countFound() {
    const total = find.matches.length;
    findPrevious.disabled = total === 0;
    findNext.disabled = total === 0;
    if (!find.asked) findCount.textContent = "";
    else if (!total) findCount.textContent = t("find.none");
    else findCount.textContent = t("find.count", { n: find.at + 1, total });
  }

  // Go `step` matches on (-1: back), round the ends: highlight, show, seek there.
  function stepFind(step) {
    const total = find.matches.length;
    if (!total) return;
    find.at = find.at < 0 ? (step > 0 ? 0 : total - 1) : (find.at + step + total) % total;
    const match = find.matches[find.at];
    foundIndex = match.utterance_index;
    applyFind();
    countFound();
    showLine(foundIndex);
    seek(match.start_ms, { play: false });
  }

  // Ask for the matches of what the box holds; the first one is shown, not played.
  async function runFind({ again = false } = {}) {
    clearTimeout(find.timer);
    find.timer = null;
    const asked = searchAsTyped(findInput.value);
    if (asked === find.asked && !again) return;
    find.controller?.abort();
    find.asked = asked;
    find.revision = current?.revision ?? null;
    if (!asked) {
      find.matches = [];
      find.at = -1;
      foundIndex = null;
      applyFind();
      countFound();
      return;
    }
    find.controller = new AbortController();
    try {
      const answer = await api.findInTranscript(id, asked, find.controller.signal);
      const keep = again && find.at >= 0 ? find.matches[find.at]?.utterance_index : null;
      find.matches = answer.matches;
      find.at = find.matches.length ? 0 : -1;
      if (keep !== null) {
        const still = find.matches.findIndex((match) => match.utterance_index === keep);
        if (still >= 0) find.at = still;
      }
      if (find.at >= 0) foundIndex = find.matches[find.at].utterance_index;
      applyFind();
      countFound();
      if (find.at >= 0 && !again) showLine(foundIndex);
    } catch (error) {
      if (error.name === "AbortError") return;
      replace(findCount, h("span", { class: "error-text" }, error.message));
    }
  }

  findInput.addEventListener("input", () => {
    clearTimeout(find.timer);
    find.timer = setTimeout(runFind, FIND_PAUSE_MS);
  });
  findInput.addEventListener("keydown", async (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    if (find.timer !== null) await runFind(); // typed but not asked yet: its first match
    else stepFind(event.shiftKey ? -1 : 1);
  });
  findPrevious.addEventListener("click", () => stepFind(-1));
  findNext.addEventListener("click", () => stepFind(1));

  // A search result's line: play from its moment, that utterance highlighted.
  function playMoment(record) {
    if (!moment || !record.utterances.length) return;
    const { startMs, index } = moment;
    moment = null;
    const line = index !== null ? record.utterances.find((u) => u.index === index)
      : record.utterances.find((u) => startMs >= u.start_ms && startMs < u.end_ms);
    if (line) {
      foundIndex = line.index;
      applyFind();
      showLine(foundIndex);
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
        h("span", { class: "utterance-text" }, u.text));
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
      texts = new Map(record.utterances.map((u) => [u.index, u.text]));
      replace(transcript, h("ol", { class: "utterances" }, items.map((x) => x.item)));
      applyFind();
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
    edit.show(record);
    if (record.halt) status.textContent = t("card.stopped");
    else if (record.stage === "done") status.textContent = t("card.done");
    else status.textContent = t("card.working", { work: work(record.stage) });
    replace(progress, stageTimeline(record),
      record.progress ? progressBar(record.progress) : null);
    replace(factsSlot, facts(record));
    renderHalt(record);
    setAudio(record);
    listen.hidden = false;
    renderDownloads(record);
    downloadPanel.hidden = false;
    speakers.show(record);
    renderTranscript(record);
    findBar.hidden = !record.utterances.length;
    transcriptPanel.hidden = false;
    playMoment(record);
    // A correction moved the transcript on: the find box asks again.
    if (find.asked && find.revision !== record.revision) runFind({ again: true });
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
    clearTimeout(find.timer);
    controller?.abort();
    find.controller?.abort();
    audio.pause();
  };
}
