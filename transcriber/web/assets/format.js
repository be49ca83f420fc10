// @ts-check
// Plain formatting of what the API sends; no HTML here.

import { language, t } from "./i18n.js";

/** @typedef {import("./types.js").RecordSummary} RecordSummary */
/** @typedef {import("./types.js").Progress} Progress */

export const STAGES = ["uploaded", "normalized", "submitted", "transcribed", "done"];

/** @param {string} stage */
export function stageLabel(stage) {
  return STAGES.includes(stage) ? t(`stage.${stage}`) : stage;
}

const HALT_REASONS = ["step_failed", "attempts_exhausted", "stuck"];

/** @param {string} reason */
export function haltLabel(reason) {
  return HALT_REASONS.includes(reason) ? t(`halt.${reason}`) : reason;
}

const STEPS = ["normalize", "submit", "poll", "finish", "resume", "retranscribe",
  "link_created", "link_revoked", "link_opened", "edited", "transcript_corrected", "moved",
  "shared", "unshared"];

/** @param {string} step */
export function stepLabel(step) {
  return STEPS.includes(step) ? t(`step.${step}`) : step;
}

/**
 * 3723000 → "1:02:03", 65000 → "1:05", null → "".
 * @param {number | null | undefined} ms
 */
export function duration(ms) {
  if (ms === null || ms === undefined) return "";
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

const UNITS = ["unit.b", "unit.kb", "unit.mb", "unit.gb", "unit.tb"];

/** @param {number | null | undefined} bytes */
export function size(bytes) {
  if (bytes === null || bytes === undefined) return "";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${t(UNITS[unit])}`;
}

/**
 * "2026-01-01T10:00:00Z" → the reader's local date and time.
 * @param {string | null | undefined} stamp
 */
export function when(stamp) {
  if (!stamp) return "";
  const date = new Date(stamp);
  if (Number.isNaN(date.getTime())) return stamp;
  return date.toLocaleString(language(), {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
}

/** @param {RecordSummary} record */
export function recordName(record) {
  return record.title || record.original_filename || t("record.unnamed", { id: record.id });
}

/**
 * A brief's first sentence (the list shows it under the title).
 * @param {string | null | undefined} brief
 */
export function briefLine(brief) {
  const text = (brief || "").trim().split("\n")[0];
  const end = text.search(/[.!?…](\s|$)/);
  return end < 0 ? text : text.slice(0, end + 1);
}

/** A field the describer wrote (`described.title` etc. `auto`), not yet a person's, and
 * left something in: a voice message's title is left empty (it would repeat the message),
 * and a mark with "Keep" beside the file name would offer to keep nothing.
 * @param {RecordSummary} record
 * @param {"title" | "brief" | "topics"} field
 */
export function isAutomatic(record, field) {
  const value = record[field];
  const written = Array.isArray(value) ? value.length > 0 : Boolean(value);
  return record.described?.[field] === "auto" && written;
}

/** @param {RecordSummary} record */
export function isSettled(record) {
  return record.halt !== null || record.stage === "done";
}

const PROGRESS_STAGES = ["queue", "normalize", "recognize"];

/**
 * 65 → "about 1 min left", 7300 → "about 2 h 2 min left", null → "".
 * @param {number | null | undefined} seconds
 */
export function eta(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 60) return t("progress.eta_under_minute");
  const minutes = Math.round(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return hours ? t("progress.eta_hours", { hours, minutes: rest })
    : t("progress.eta_minutes", { minutes });
}

/**
 * The card's and the list's words for a record's `progress` (null: none).
 * @param {Progress | null | undefined} progress
 */
export function progressText(progress) {
  if (!progress) return "";
  const stage = PROGRESS_STAGES.includes(progress.stage)
    ? t(`progress.${progress.stage}`) : progress.stage;
  const percent = `${Math.floor(progress.fraction * 100)}%`;
  const parts = progress.stage === "recognize" && progress.total > 1
    ? ` · ${t("progress.part", { part: Math.min(progress.done + 1, progress.total),
      total: progress.total })}` : "";
  const left = eta(progress.eta_seconds);
  return `${stage} · ${percent}${parts}` + (left ? ` · ${left}` : "");
}
