// @ts-check
// API tokens: the signed-in person's personal access tokens. A new token is
// shown once, right after it is made (the server keeps only its hash); the
// list shows names, scopes and times, never a token; revoking asks first.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { when } from "./format.js";
import { t } from "./i18n.js";

// Days a new token lives; 0: until revoked.
const EXPIRIES = [0, 30, 90, 365];
/** @typedef {import("./types.js").Token} Token */

/** @param {string} scope */
function scopeLabel(scope) {
  return scope === "read" ? t("tokens.scope_read") : t("tokens.scope_write");
}

/**
 * @param {Token} token
 * @param {() => void} refresh
 * @param {HTMLElement} status
 */
function tokenRow(token, refresh, status) {
  const revoke = h("button", { type: "button", class: "button button-danger" },
    t("tokens.revoke"));
  revoke.addEventListener("click", async () => {
    if (!window.confirm(t("tokens.revoke_confirm", { name: token.name || token.id }))) return;
    revoke.disabled = true;
    try {
      await api.revokeToken(token.id);
      status.textContent = t("tokens.revoked", { name: token.name || token.id });
      refresh();
    } catch (error) {
      revoke.disabled = false;
      status.textContent = error.message;
    }
  });
  return h("tr", { "data-id": token.id },
    h("td", {}, token.name || h("span", { class: "muted" }, t("tokens.unnamed"))),
    h("td", {}, scopeLabel(token.scope)),
    h("td", {}, h("time", { datetime: token.created_at }, when(token.created_at))),
    h("td", {}, token.last_used_at
      ? h("time", { datetime: token.last_used_at }, when(token.last_used_at))
      : t("tokens.never_used")),
    h("td", {}, token.expires_at
      ? h("time", { datetime: token.expires_at }, when(token.expires_at))
      : t("tokens.never_expires")),
    h("td", {}, revoke));
}

/** @param {Token & {token: string}} made */
function shownOnce(made) {
  const value = h("input", { type: "text", readonly: true, value: made.token,
    class: "token-value", "aria-label": t("tokens.new_label"), spellcheck: "false" });
  value.addEventListener("focus", () => value.select());
  const said = h("span", { class: "muted small", role: "status", "aria-live": "polite" });
  const copy = h("button", { type: "button" }, t("tokens.copy"));
  copy.addEventListener("click", () => {
    // The clipboard API needs a secure context (HTTPS or localhost); elsewhere the
    // selected text is what the person copies themselves.
    value.focus();
    value.select();
    const writing = navigator.clipboard
      ? navigator.clipboard.writeText(made.token) : Promise.reject(new Error("no clipboard"));
    writing.then(() => { said.textContent = t("tokens.copied"); },
      () => { said.textContent = t("tokens.copy_by_hand"); });
  });
  return h("div", { class: "token-made", role: "alert" },
    h("p", {}, h("strong", {}, t("tokens.made", { name: made.name || made.id }))),
    h("div", { class: "token-copy" }, value, copy),
    said,
    h("p", { class: "muted small" }, t("tokens.shown_once")));
}

/**
 * @param {HTMLElement} main
 * @returns {() => void}
 */
export function renderTokens(main) {
  document.title = t("title.tokens");
  const controller = new AbortController();
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" });
  const made = h("div", {});
  const body = h("tbody", {});
  const table = h("table", { class: "tokens" },
    h("thead", {}, h("tr", {},
      ["tokens.name", "tokens.scope", "tokens.created", "tokens.last_used", "tokens.expires"]
        .map((key) => h("th", { scope: "col" }, t(key))),
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, t("tokens.actions"))))),
    body);
  const empty = h("p", { class: "muted" }, t("tokens.none"));

  async function refresh() {
    try {
      const { items } = await api.listTokens(controller.signal);
      replace(body, items.map((token) => tokenRow(token, refresh, status)));
      table.hidden = items.length === 0;
      empty.hidden = items.length !== 0;
    } catch (error) {
      if (error.name !== "AbortError") status.textContent = error.message;
    }
  }

  const name = h("input", { id: "token-name", type: "text", maxlength: "100",
    autocomplete: "off" });
  const scope = h("select", { id: "token-scope" },
    ["write", "read"].map((s) => h("option", { value: s }, scopeLabel(s))));
  const expiry = h("select", { id: "token-expiry" },
    EXPIRIES.map((days) => h("option", { value: String(days) },
      days ? t("tokens.expires_in", { days }) : t("tokens.never_expires"))));
  const create = h("button", { type: "submit", class: "button button-primary" },
    t("tokens.create"));
  const form = h("form", { class: "token-form" },
    h("p", {}, h("label", { for: "token-name" }, t("tokens.name")), " ", name),
    h("p", {}, h("label", { for: "token-scope" }, t("tokens.scope")), " ", scope),
    h("p", {}, h("label", { for: "token-expiry" }, t("tokens.expires")), " ", expiry),
    h("p", {}, create));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    create.disabled = true;
    try {
      const days = Number.parseInt(expiry.value, 10);
      const token = await api.createToken({ name: name.value.trim(), scope: scope.value,
        expires_days: days || null });
      replace(made, shownOnce(token));
      name.value = "";
      status.textContent = "";
      refresh();
    } catch (error) {
      status.textContent = error.message;
    } finally {
      create.disabled = false;
    }
  });

  replace(main,
    h("div", { class: "view-head" }, h("h1", { tabindex: "-1" }, t("tokens.heading"))),
    h("p", {}, t("tokens.intro")),
    h("p", { class: "muted small" }, t("tokens.how")),
    made, form, status, table, empty);
  table.hidden = true;
  empty.hidden = true;
  refresh();
  return () => controller.abort();
}
