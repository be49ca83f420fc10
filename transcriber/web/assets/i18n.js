// @ts-check
// Every string a person reads comes from a catalogue (messages-en.js,
// messages-ru.js): `t("key", {name})` fills `{name}` placeholders. The
// language follows the browser's (what it sends as Accept-Language) until
// the person picks one, which is remembered in this browser.
// tests/unit/web/test_catalogues.py fails on a key missing from either one.

import { MESSAGES as EN } from "./messages-en.js";
import { MESSAGES as RU } from "./messages-ru.js";

/** @type {Record<string, Record<string, string>>} */
export const CATALOGUES = { en: EN, ru: RU };
/** @type {Record<string, string>} */
const ENGLISH = EN;
/** @type {[string, string][]} */
export const LANGUAGES = [["en", "English"], ["ru", "Русский"]];
const STORAGE_KEY = "transcriber.language";

function stored() {
  try {
    return window.localStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage refused (privacy mode): follow the browser
  }
}

function fromBrowser() {
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (base in CATALOGUES) return base;
  }
  return "en";
}

let current = (() => {
  const chosen = stored();
  return chosen && chosen in CATALOGUES ? chosen : fromBrowser();
})();

export function language() {
  return current;
}

/** @param {string} code */
export function setLanguage(code) {
  if (!(code in CATALOGUES)) return;
  current = code;
  try {
    window.localStorage.setItem(STORAGE_KEY, code);
  } catch {
    // not remembered: it still applies to this page
  }
  document.documentElement.lang = code;
}

/**
 * @param {string} key
 * @param {Record<string, string | number>} [values]
 * @returns {string}
 */
export function t(key, values = {}) {
  const text = CATALOGUES[current][key] ?? ENGLISH[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** Fill the static page's `data-i18n` elements (index.html). */
export function translatePage() {
  document.documentElement.lang = current;
  for (const el of document.querySelectorAll("[data-i18n]")) {
    if (el instanceof HTMLElement) el.textContent = t(el.dataset.i18n ?? "");
  }
}
