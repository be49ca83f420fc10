// @ts-check
// The card's player: the recording (the normalized copy when there is one,
// smaller and always playable; the original as the fallback), a seek that
// survives a player without metadata yet, the utterance being spoken marked
// as it plays and kept in view (it follows along), and the moment a link asked
// for (`?t=<ms>&u=<index>`).

import * as api from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */

const FOLLOW_PAUSE_MS = 4000;
/** @typedef {{startMs: number | null, index: number | null}} Moment */
/** @typedef {(startMs: number, options?: {play?: boolean}) => void} Seek */

/**
 * The moment `?t=<ms>&u=<index>` asks to play, either part null; or null.
 * @param {URLSearchParams | undefined} params
 * @returns {Moment | null}
 */
export function askedMoment(params) {
  /** @param {string} name */
  const read = (name) => {
    const value = params?.get(name);
    return value && /^\d+$/.test(value) ? Number(value) : null;
  };
  const startMs = read("t");
  const index = read("u");
  return startMs === null && index === null ? null : { startMs, index };
}

/**
 * The utterance a moment points at: by index when it names one, else the one
 * spoken at its time.
 * @param {RecordCard} record
 * @param {Moment} moment
 */
export function momentLine(record, { startMs, index }) {
  return index !== null ? record.utterances.find((u) => u.index === index)
    : record.utterances.find((u) => startMs !== null && startMs >= u.start_ms
      && startMs < u.end_ms);
}

/**
 * @param {{id: string, lines: () => HTMLElement[]}} options `lines`: the
 *   transcript's buttons, each with `data-start` and `data-end` in ms.
 */
export function player({ id, lines }) {
  const audio = h("audio", { controls: true, preload: "metadata", class: "player" });
  // Sticky (app.css): the player stays in view while the transcript scrolls under it.
  const panel = h("section", { class: "panel listen-panel", "aria-labelledby": "listen-h",
    hidden: true }, h("h2", { id: "listen-h", class: "visually-hidden" }, t("card.listen")),
  audio);
  /** @type {HTMLElement | null} */
  let speaking = null;
  // A person scrolling the transcript is not pulled back to the line being played
  // for a few seconds (they are reading elsewhere).
  let scrolledAt = -Infinity;
  for (const kind of ["wheel", "touchmove"]) {
    window.addEventListener(kind, () => { scrolledAt = performance.now(); }, { passive: true });
  }
  /** @type {"normalized" | "original" | null} */
  let copy = null;

  audio.addEventListener("error", () => {
    if (copy === "normalized") {
      copy = "original";
      audio.src = api.fileUrl(id, "original");
    }
  });
  audio.addEventListener("timeupdate", () => {
    const ms = audio.currentTime * 1000;
    /** @type {HTMLElement | null} */
    let now = null;
    for (const button of lines()) {
      const on = ms >= Number(button.dataset.start) && ms < Number(button.dataset.end);
      button.classList.toggle("speaking", on);
      if (on) {
        button.setAttribute("aria-current", "true");
        now = now || button;
      } else button.removeAttribute("aria-current");
    }
    if (now && now !== speaking && !audio.paused) follow(now);
    speaking = now;
  });

  // Keep the line being played in view, below the sticky player: only when it has left
  // the view, and not while the person scrolls.
  /** @param {HTMLElement} line */
  function follow(line) {
    if (performance.now() - scrolledAt < FOLLOW_PAUSE_MS) return;
    const box = line.getBoundingClientRect();
    const top = panel.getBoundingClientRect().bottom;
    if (box.top >= top && box.bottom <= window.innerHeight) return;
    const calm = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    line.scrollIntoView({ block: "center", behavior: calm ? "auto" : "smooth" });
  }

  /** @type {Seek} */
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

  /**
   * The copy to play; a player already moved keeps its copy.
   * @param {RecordCard} record
   */
  function show(record) {
    const wanted = record.files?.normalized ? "normalized" : "original";
    const untouched = audio.paused && audio.currentTime === 0;
    panel.hidden = false;
    if (copy === wanted || (copy !== null && !untouched)) return;
    copy = wanted;
    audio.src = api.fileUrl(id, wanted);
  }

  return { panel, seek, show, stop: () => audio.pause() };
}
