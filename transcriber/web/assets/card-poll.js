// @ts-check
// Asking for a record's card while it moves: after the server's
// `poll_after_ms`, never sooner, and only once the last answer came. A
// refresh asked for meanwhile (Resume, a refused correction) follows the
// request in flight. Failures wait longer each time, never less than the
// server's `Retry-After`; a card that is gone stops the asking.

import * as api from "./api.js";
import { isSettled } from "./format.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */

export const FALLBACK_POLL_MS = 4000;
export const MAX_ERROR_POLL_MS = 60000;

/**
 * Whether the card changes by itself, so is asked for again.
 * @param {RecordCard} record
 */
export function moving(record) {
  return record.poll_after_ms !== null
    && (!isSettled(record) || record.described?.state === "pending");
}

/**
 * The wait after a failure: doubled each time from the last poll interval,
 * at most MAX_ERROR_POLL_MS, and never sooner than the server's Retry-After.
 * @param {number} previousMs the last failure's back-off (0 after a success)
 * @param {number} lastPollMs
 * @param {number | null} retryAfterSeconds
 * @returns {{backoffMs: number, waitMs: number}}
 */
export function backoff(previousMs, lastPollMs, retryAfterSeconds) {
  const backoffMs = Math.min(Math.max(previousMs * 2, lastPollMs), MAX_ERROR_POLL_MS);
  return { backoffMs, waitMs: Math.max(backoffMs, (retryAfterSeconds || 0) * 1000) };
}

/**
 * @param {{
 *   id: string,
 *   shown: (record: RecordCard) => void,
 *   gone: () => void,
 *   failed: (error: api.ApiError, waitMs: number) => void,
 * }} options
 */
export function cardPoller({ id, shown, gone, failed }) {
  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let inFlight = false;
  let again = false;
  /** @type {AbortController | null} */
  let controller = null;
  let lastPollMs = FALLBACK_POLL_MS;
  let errorDelayMs = 0;

  /** @param {number} delayMs */
  function schedule(delayMs) {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(refresh, delayMs);
  }

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
      shown(record);
      if (again) {
        again = false;
        schedule(0);
      } else if (record.poll_after_ms !== null && moving(record)) {
        lastPollMs = Math.max(record.poll_after_ms, 1);
        schedule(lastPollMs);
      }
    } catch (error) {
      const failure = /** @type {api.ApiError} */ (error);
      if (stopped || failure.name === "AbortError") return;
      if (failure.status === 404) {
        gone();
        return;
      }
      const { backoffMs, waitMs } = backoff(errorDelayMs, lastPollMs,
        failure.retryAfterSeconds);
      errorDelayMs = backoffMs;
      failed(failure, waitMs);
      schedule(waitMs);
    } finally {
      inFlight = false;
    }
  }

  return {
    /** Ask now (or right after the request in flight). */
    refresh: () => schedule(0),
    stop() {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
    },
  };
}
