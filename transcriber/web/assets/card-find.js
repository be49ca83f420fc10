// @ts-check
// The card's find box above the transcript: it takes the same words as the
// search, marks the utterances holding them and steps through them, each
// found one outlined, scrolled into view and the player moved there without
// starting it. The card redraws its lines often (polls, corrections); the
// find state lives here so it outlives every redraw.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { markedText, searchAsTyped } from "./list.js";

/** @typedef {import("./types.js").Match} Match */
/** @typedef {[number, number]} Mark */

const FIND_PAUSE_MS = 300;
const CUT = "\u2026"; // what marks a snippet's cut end

/**
 * A match's marks in the utterance's whole `text` ([start, end) in code
 * points): its snippet may be a window of it with `…` at a cut end. Marks
 * that do not fall on the same words (the text changed since) are left out.
 * @param {string} text
 * @param {Match} match
 * @returns {Mark[]}
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
  const moved = shift;
  return match.marks.map(([start, end]) => /** @type {Mark} */ ([start + moved, end + moved]))
    .filter(([start, end], i) => start >= 0 && end <= full.length
      && full.slice(start, end).join("")
        === snippet.slice(match.marks[i][0], match.marks[i][1]).join(""));
}

/**
 * The find box of record `id` over the `transcript` element's lines
 * (`.utterances > li[data-index]`); `seek(ms, {play})` moves the player,
 * `showLine(index)` scrolls a line into view and `revision()` is the revision
 * the card shows (what a question is asked on). The card tells it when the
 * lines were drawn again (`redrawn`), when it showed a record (`recheck`),
 * and which utterance a moment from the address outlines (`outline`).
 * @param {{
 *   id: string,
 *   transcript: HTMLElement,
 *   seek: (startMs: number, options?: {play?: boolean}) => void,
 *   showLine: (index: number) => void,
 *   revision: () => number | undefined,
 * }} options
 */
export function findBox({ id, transcript, seek, showLine, revision }) {
  // What was asked (on which revision) and the matches it answered.
  /**
   * @type {{asked: string, revision: number | null, matches: Match[], at: number,
   *   timer: ReturnType<typeof setTimeout> | null, controller: AbortController | null}}
   */
  const find = { asked: "", revision: null, matches: [], at: -1, timer: null,
    controller: null };
  /** @type {number | null} */
  let foundIndex = null; // the utterance highlighted (.utterance-found)
  /** @type {Map<number, string>} */
  let texts = new Map(); // utterance index → its text as drawn

  const findInput = h("input", { id: "find", type: "search", autocomplete: "off",
    maxlength: "200", placeholder: t("find.placeholder") });
  const findPrevious = h("button", { type: "button", class: "button-quiet find-previous",
    title: t("find.previous_hint"), disabled: true }, t("find.previous"));
  const findNext = h("button", { type: "button", class: "button-quiet find-next",
    title: t("find.next_hint"), disabled: true }, t("find.next"));
  const findCount = h("span", { class: "find-count", "aria-live": "polite",
    "aria-atomic": "true" });
  const element = h("div", { class: "find", role: "search", hidden: true },
    h("label", { for: "find" }, t("find.label")),
    h("div", { class: "find-row" }, findInput, findPrevious, findNext, findCount));

  // The find state on the lines drawn: matches marked, the current one found.
  // Runs after every redraw, so it outlives them.
  function applyFind() {
    const byIndex = new Map(find.matches.map((match) => [match.utterance_index, match]));
    for (const line of transcript.querySelectorAll("li")) {
      if (!line.matches(".utterances > li")) continue;
      const index = Number(line.dataset.index);
      const match = byIndex.get(index);
      line.classList.toggle("utterance-match", !!match);
      line.classList.toggle("utterance-found", index === foundIndex);
      const text = line.querySelector(".utterance-text");
      const drawn = texts.get(index);
      if (!text || drawn === undefined) continue;
      if (match) replace(text, markedText(drawn, marksInText(drawn, match)));
      else if (text.querySelector("mark")) replace(text, drawn);
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
  /** @param {number} step */
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
  /** @param {{again?: boolean}} [options] */
  async function runFind({ again = false } = {}) {
    if (find.timer !== null) clearTimeout(find.timer);
    find.timer = null;
    const asked = searchAsTyped(findInput.value);
    if (asked === find.asked && !again) return;
    find.controller?.abort();
    find.asked = asked;
    find.revision = revision() ?? null;
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
      if (find.at >= 0 && !again && foundIndex !== null) showLine(foundIndex);
    } catch (error) {
      if (error.name === "AbortError") return;
      replace(findCount, h("span", { class: "error-text" }, error.message));
    }
  }

  findInput.addEventListener("input", () => {
    if (find.timer !== null) clearTimeout(find.timer);
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

  return {
    element,
    /**
     * The lines were drawn again with these texts (index → text): mark them again.
     * @param {Map<number, string>} drawn
     */
    redrawn(drawn) {
      texts = drawn;
      applyFind();
    },
    /**
     * Outline utterance `index` as the found one (a moment from the address).
     * @param {number} index
     */
    outline(index) {
      foundIndex = index;
      applyFind();
    },
    /** The card showed a record: if a correction moved the transcript on, ask again. */
    recheck() {
      if (find.asked && find.revision !== revision()) runFind({ again: true });
    },
    stop() {
      if (find.timer !== null) clearTimeout(find.timer);
      find.controller?.abort();
    },
  };
}
