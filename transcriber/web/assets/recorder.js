// @ts-check
// The record button (on the Upload page): MediaRecorder, Opus in WebM or OGG,
// a chunk a second written to this browser's storage (kept.js) and sent to the
// server through the resumable protocol as it goes, every few seconds. Pause
// and resume, a level meter, the elapsed time, a wake lock while recording (the
// screen stays on where the browser allows). On the next visit a recording
// kept but not finished is offered to be sent; where the browser cannot record
// (no microphone API, no MediaRecorder, no storage) the section says so. While
// it records, the text the server heard so far in what was sent is shown below
// (a preview: the record's own transcript follows once it is uploaded).

import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import * as kept from "./kept.js";

const TYPES = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/webm"];
const CHUNK_MS = 1000;
// Sending after every chunk would spend the rate limit (120 requests a minute).
const SEND_EVERY_MS = 5000;
const FINISH_TRIES = 10;

/** @returns {string | null} what this browser records, or null when it cannot */
function recordable() {
  if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === "undefined"
      || typeof indexedDB === "undefined") return null;
  return TYPES.find((type) => MediaRecorder.isTypeSupported(type)) ?? null;
}

/** @param {number} ms */
function clock(ms) {
  const seconds = Math.floor(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return minutes >= 60 ? `${Math.floor(minutes / 60)}:${pad(minutes % 60)}:${pad(seconds % 60)}`
    : `${pad(minutes)}:${pad(seconds % 60)}`;
}

/**
 * @param {kept.Kept} recording
 * @param {HTMLElement} state
 */
async function finishSending(recording, state) {
  state.textContent = t("record.sending");
  try {
    // A send still running (the last periodic one) makes this one wait its turn (409).
    for (let attempt = 0; attempt < FINISH_TRIES; attempt += 1) {
      const sent = await kept.send(recording, (done, total) => {
        state.textContent = t("record.sent",
          { percent: Math.floor((done / Math.max(total, 1)) * 100) });
      });
      if (sent.recordId) {
        replace(state, t("record.done"), " ",
          h("a", { href: `/records/${encodeURIComponent(sent.recordId)}` }, t("record.open")));
        return;
      }
      await new Promise((resolve) => { setTimeout(resolve, 1000); });
    }
    state.textContent = t("record.send_failed", { message: t("record.busy") });
  } catch (error) {
    state.textContent = t("record.send_failed", { message: error.message });
  }
}

/** @param {HTMLElement} list */
async function offerKept(list) {
  let left;
  try {
    left = await kept.unfinished();
  } catch {
    return;
  }
  for (const recording of left) {
    const state = h("p", { class: "upload-state", role: "status" });
    const send = h("button", { type: "button", class: "button" }, t("record.finish"));
    const discard = h("button", { type: "button", class: "button-quiet" }, t("record.discard"));
    const row = h("li", { class: "upload" },
      h("div", { class: "upload-head" },
        h("span", { class: "upload-name" }, t("record.kept", {
          when: new Date(recording.started).toLocaleString(),
          size: `${Math.ceil(recording.bytes / 1024)} KiB` })),
        send, discard),
      state);
    send.addEventListener("click", async () => {
      send.disabled = true;
      discard.remove();
      recording.stopped = true;
      await kept.save(recording);
      await finishSending(recording, state);
      send.remove();
    });
    discard.addEventListener("click", async () => {
      await kept.forget(recording);
      row.remove();
    });
    list.append(row);
  }
}

/**
 * The recorder's section of the Upload page.
 * @returns {HTMLElement}
 */
export function recorderSection() {
  const type = recordable();
  const section = h("section", { class: "recorder", "aria-labelledby": "recorder-title" },
    h("h2", { id: "recorder-title" }, t("record.heading")));
  const keptList = h("ul", { class: "uploads", "aria-label": t("record.kept_list") });
  offerKept(keptList);
  if (type === null) {
    section.append(h("p", { role: "alert" }, t("record.unsupported")), keptList);
    return section;
  }
  const start = h("button", { type: "button", class: "button button-primary" }, t("record.start"));
  const pause = h("button", { type: "button", class: "button", hidden: true }, t("record.pause"));
  const stop = h("button", { type: "button", class: "button", hidden: true }, t("record.stop"));
  const elapsed = h("span", { class: "recorder-time", "aria-label": t("record.elapsed") }, "00:00");
  const level = h("meter", { min: "0", max: "1", value: "0", "aria-label": t("record.level") });
  const state = h("p", { class: "upload-state", role: "status" });
  const heardText = h("p", { class: "recorder-heard-text" });
  const heard = h("div", { class: "recorder-heard", hidden: true, "aria-live": "polite" },
    h("h3", {}, t("record.heard")), heardText, h("p", { class: "muted" }, t("record.heard_note")));
  section.append(h("p", { class: "recorder-controls" }, start, pause, stop, " ", elapsed, " ",
    level), state, heard, keptList);

  /** @type {MediaRecorder | null} */
  let recorder = null;
  /** @type {kept.Kept | null} */
  let recording = null;
  /** @type {WakeLockSentinel | null} */
  let wake = null;
  let shown = 0;
  let since = 0;
  let sending = false;
  let lastSend = 0;
  let frame = 0;
  /** @type {(() => void) | null} */
  let release = null;

  const sendSoon = async () => {
    if (!recording || sending || Date.now() - lastSend < SEND_EVERY_MS) return;
    sending = true;
    lastSend = Date.now();
    try {
      await kept.send(recording);
      state.textContent = t("record.recording_sent", { size: `${Math.ceil(recording.sentBytes / 1024)} KiB` });
      const text = await kept.textSoFar(recording).catch(() => null);
      if (text) {
        heardText.textContent = text;
        heard.hidden = false;
      }
    } catch {
      // Offline or the server away: everything is kept here; the next chunk tries again.
      state.textContent = t("record.offline");
    } finally {
      sending = false;
    }
  };

  const tick = () => {
    elapsed.textContent = clock(shown + (recorder?.state === "recording" ? Date.now() - since : 0));
  };

  start.addEventListener("click", async () => {
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch {
      state.textContent = t("record.no_microphone");
      return;
    }
    const now = new Date();
    recording = { id: `${now.getTime()}-${Math.random().toString(36).slice(2)}`,
      name: t("record.file_name", { when: now.toISOString().slice(0, 16).replace("T", " ") })
        + (type.includes("ogg") ? ".ogg" : ".webm"),
      mime: type, started: now.getTime(), chunks: 0, bytes: 0, sentChunks: 0, sentBytes: 0,
      url: "", stopped: false, recordId: "" };
    await kept.save(recording);
    heard.hidden = true;
    heardText.textContent = "";
    // 32 kbit/s Opus carries speech well: 14 MB an hour over a phone's network.
    recorder = new MediaRecorder(stream, { mimeType: type, audioBitsPerSecond: 32000 });
    const own = recording;
    // Chunks are written in order, and the stop waits for the last one: the length
    // the last PATCH names must count every chunk.
    let writing = Promise.resolve();
    recorder.addEventListener("dataavailable", (event) => {
      if (event.data.size === 0) return;
      // The send is not awaited: a slow network must not hold back the next write.
      writing = writing.then(() => kept.addChunk(own, event.data)).then(() => { sendSoon(); });
    });
    recorder.addEventListener("stop", async () => {
      for (const track of stream.getTracks()) track.stop();
      await writing;
      own.stopped = true;
      await kept.save(own);
      await finishSending(own, state);
    });
    // The level: the loudness of the last few milliseconds, redrawn each frame.
    const audio = new AudioContext();
    const analyser = audio.createAnalyser();
    audio.createMediaStreamSource(stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    const draw = () => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const sample of samples) sum += sample * sample;
      level.value = Math.min(1, Math.sqrt(sum / samples.length) * 4);
      tick();
      frame = requestAnimationFrame(draw);
    };
    release = () => {
      cancelAnimationFrame(frame);
      audio.close();
      wake?.release();
      wake = null;
    };
    try {
      wake = await navigator.wakeLock?.request("screen") ?? null;
    } catch {
      wake = null; // refused (battery saver): recording goes on regardless
    }
    recorder.start(CHUNK_MS);
    since = Date.now();
    shown = 0;
    draw();
    start.hidden = true;
    pause.hidden = false;
    stop.hidden = false;
    state.textContent = t("record.recording");
  });

  pause.addEventListener("click", () => {
    if (!recorder) return;
    if (recorder.state === "recording") {
      recorder.pause();
      shown += Date.now() - since;
      pause.textContent = t("record.resume");
      state.textContent = t("record.paused");
    } else if (recorder.state === "paused") {
      recorder.resume();
      since = Date.now();
      pause.textContent = t("record.pause");
      state.textContent = t("record.recording");
    }
  });

  stop.addEventListener("click", () => {
    if (!recorder || recorder.state === "inactive") return;
    if (recorder.state === "recording") shown += Date.now() - since;
    recorder.stop();
    release?.();
    tick();
    level.value = 0;
    pause.hidden = true;
    stop.hidden = true;
    start.hidden = false;
  });

  return section;
}
