// Plain formatting of what the API sends; no HTML here.

export const STAGES = ["uploaded", "normalized", "submitted", "transcribed", "done"];

export const STAGE_LABELS = {
  uploaded: "Uploaded",
  normalized: "Normalized",
  submitted: "Sent for recognition",
  transcribed: "Transcribed",
  done: "Done",
};

export const HALT_REASONS = {
  step_failed: "A step failed",
  attempts_exhausted: "Too many failed attempts",
  stuck: "Stuck for too long",
};

export const STEP_LABELS = {
  normalize: "Normalize",
  submit: "Submit",
  poll: "Recognize",
  finish: "Finish",
  resume: "Resume",
};

export function stageLabel(stage) {
  return STAGE_LABELS[stage] || stage;
}

export function haltLabel(reason) {
  return HALT_REASONS[reason] || reason;
}

/** 3723000 → "1:02:03", 65000 → "1:05", null → "". */
export function duration(ms) {
  if (ms === null || ms === undefined) return "";
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

const UNITS = ["B", "KB", "MB", "GB", "TB"];

export function size(bytes) {
  if (bytes === null || bytes === undefined) return "";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

/** "2026-01-01T10:00:00Z" → the reader's local date and time. */
export function when(stamp) {
  if (!stamp) return "";
  const date = new Date(stamp);
  if (Number.isNaN(date.getTime())) return stamp;
  return date.toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
}

export function recordName(record) {
  return record.title || record.original_filename || `Record ${record.id}`;
}

export function isSettled(record) {
  return record.halt !== null || record.stage === "done";
}

export const PROGRESS_STAGES = {
  normalize: "Preparing the audio",
  recognize: "Recognizing",
};

/** 65 → "about 1 min", 7300 → "about 2 h 2 min", null → "". */
export function eta(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 60) return "less than a minute left";
  const minutes = Math.round(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return `about ${hours ? `${hours} h ${rest} min` : `${minutes} min`} left`;
}

/** The card's and the list's words for a record's `progress` (null: none). */
export function progressText(progress) {
  if (!progress) return "";
  const percent = `${Math.floor(progress.fraction * 100)}%`;
  const parts = progress.stage === "recognize" && progress.total > 1
    ? ` · part ${Math.min(progress.done + 1, progress.total)} of ${progress.total}` : "";
  const left = eta(progress.eta_seconds);
  return `${PROGRESS_STAGES[progress.stage] || progress.stage} · ${percent}${parts}` +
    (left ? ` · ${left}` : "");
}
