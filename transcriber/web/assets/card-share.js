// @ts-check
// The card's sharing: a Share button opening a dialog. Its "Links" part lists
// the record's links for people outside (expiry, views, last opened), makes
// one (how long, with the recording or not), shows its address once with a
// Copy button, and revokes one (asking first). Two places stand apart above
// it, `space` (the record's space: the owner moves it) and `people` (shared
// with a person: the owner and a space's admin), filled by card-share-people.js
// and each hidden from whom may not use it. The panel is shown to those who may
// share (the card's `role`: owner or admin); its summary says who sees the record.

import * as api from "./api.js";
import { peoplePart, spacePart } from "./card-share-people.js";
import { h, replace } from "./dom.js";
import { when } from "./format.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").Link} Link */
/** @typedef {import("./types.js").RecordCard} RecordCard */

// Days a new link lasts (the server refuses more than `links.max_days`).
export const LINK_DAYS = [1, 7, 30, 90];
const DEFAULT_DAYS = 7;

/**
 * @param {Link} link
 * @param {(link: Link) => void} revoke
 */
function linkRow(link, revoke) {
  const button = h("button", { type: "button", class: "button button-danger" },
    t("share.revoke"));
  button.addEventListener("click", () => revoke(link));
  return h("li", { class: "share-link", "data-id": link.id },
    h("span", { class: link.expired ? "error-text" : "" }, link.expired
      ? t("share.expired")
      : [t("share.expires_at"), " ",
        h("time", { datetime: link.expires_at }, when(link.expires_at))]),
    link.audio ? h("span", { class: "muted" }, t("share.has_audio")) : null,
    h("span", {}, t("share.views", { views: link.views })),
    link.last_opened_at
      ? h("span", { class: "muted" }, t("share.last_opened"), " ",
        h("time", { datetime: link.last_opened_at }, when(link.last_opened_at)))
      : null,
    button);
}

/**
 * The address of a link just made, shown this once, with a Copy button.
 * @param {string} url
 * @param {HTMLElement} status
 */
function shownOnce(url, status) {
  const address = new URL(url, window.location.origin).href;
  const value = h("input", { type: "text", readonly: true, value: address,
    class: "link-value", "aria-label": t("share.new_label"), spellcheck: "false" });
  value.addEventListener("focus", () => value.select());
  const copy = h("button", { type: "button", class: "button button-primary" },
    t("share.copy"));
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(address);
      status.textContent = t("share.copied");
    } catch {
      value.focus();
      status.textContent = t("share.copy_by_hand");
    }
  });
  return h("div", { class: "link-made", role: "alert" },
    h("p", {}, h("strong", {}, t("share.made"))),
    h("div", { class: "link-copy" }, value, copy),
    h("p", { class: "muted small" }, t("share.shown_once")));
}

/**
 * @param {string} id
 * @param {{changed?: () => void}} [context] `changed`: a share or move was made (the
 *   card asks for itself again)
 */
export function sharePanel(id, { changed = () => {} } = {}) {
  const status = h("p", { class: "muted small", role: "status", "aria-live": "polite" });
  const summary = h("p", { class: "muted small" });
  const made = h("div", {});
  const list = h("ul", { class: "share-links" });
  const none = h("p", { class: "muted" }, t("share.no_links"));
  const days = h("select", { id: "share-days" },
    LINK_DAYS.map((count) => h("option", { value: String(count),
      selected: count === DEFAULT_DAYS }, t("share.days", { days: count }))));
  const audio = h("input", { id: "share-audio", type: "checkbox" });
  const create = h("button", { type: "submit", class: "button button-primary" },
    t("share.create"));
  const form = h("form", { class: "share-form" },
    h("p", {}, h("label", { for: "share-days" }, t("share.expires")), " ", days),
    h("p", {}, audio, " ", h("label", { for: "share-audio" }, t("share.with_audio"))),
    h("p", {}, create));
  const people = peoplePart({ id, status, changed });
  const space = spacePart({ id, status, changed });
  // Hidden from whom may not use them (`show`).
  const places = {
    space: h("section", { class: "share-place share-space", "aria-labelledby": "share-space-h",
      hidden: true }, h("h3", { id: "share-space-h" }, t("share.space")), space.element),
    people: h("section", { class: "share-place share-people",
      "aria-labelledby": "share-people-h", hidden: true },
    h("h3", { id: "share-people-h" }, t("share.people")), people.element),
  };
  const linksPart = h("section", { class: "share-place", "aria-labelledby": "share-links-h" },
    h("h3", { id: "share-links-h" }, t("share.links")),
    h("p", { class: "muted small" }, t("share.links_intro")),
    made, list, none, form, status);
  const close = h("button", { type: "button", class: "button" }, t("share.close"));
  const dialog = h("dialog", { class: "share-dialog", "aria-labelledby": "share-h" },
    h("div", { class: "dialog-head" }, h("h2", { id: "share-h" }, t("share.heading")), close),
    places.space, places.people, linksPart);
  const open = h("button", { type: "button", class: "button" }, t("share.open"));
  const panel = h("section", { class: "panel", "aria-labelledby": "share-panel-h",
    hidden: true }, h("h2", { id: "share-panel-h" }, t("share.heading")), summary, open,
  dialog);
  let loaded = false;
  let liveLinks = 0;
  /** @type {RecordCard | null} */
  let latest = null;

  // Who sees the record besides its owner: its space, the people, the links.
  function summarize() {
    const parts = [];
    if (latest?.space) parts.push(t("share.summary_space", { name: space.nameOf(latest.space) }));
    const shared = latest?.shares?.length ?? 0;
    if (shared) parts.push(t("share.summary_people", { count: shared }));
    if (liveLinks) parts.push(t("share.summary", { count: liveLinks }));
    summary.textContent = parts.length ? parts.join(" · ") : t("share.private");
  }

  async function refresh() {
    try {
      const { items } = await api.listLinks(id);
      replace(list, items.map((link) => linkRow(link, revoke)));
      list.hidden = items.length === 0;
      none.hidden = items.length !== 0;
      liveLinks = items.filter((link) => !link.expired).length;
      summarize();
    } catch (error) {
      status.textContent = error.message;
    }
  }

  /** @param {Link} link */
  async function revoke(link) {
    if (!window.confirm(t("share.revoke_confirm"))) return;
    try {
      await api.revokeLink(id, link.id);
      status.textContent = t("share.revoked");
      replace(made);
      await refresh();
    } catch (error) {
      status.textContent = error.message;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    create.disabled = true;
    try {
      const link = await api.createLink(id, {
        expires_in_days: Number.parseInt(days.value, 10), audio: audio.checked });
      status.textContent = "";
      replace(made, shownOnce(link.url, status));
      await refresh();
    } catch (error) {
      status.textContent = error.message;
    } finally {
      create.disabled = false;
    }
  });
  open.addEventListener("click", () => {
    status.textContent = "";
    dialog.showModal();
    refresh();
    if (!places.people.hidden) people.refresh();
    if (!places.space.hidden) space.refresh(latest?.space ?? null).then(summarize);
  });
  close.addEventListener("click", () => dialog.close());
  // The address is shown once: closing the dialog forgets it.
  dialog.addEventListener("close", () => replace(made));

  /** @param {RecordCard} record */
  function show(record) {
    latest = record;
    // A card without `role` is the owner's (a server before sharing).
    const role = record.role ?? "owner";
    panel.hidden = role !== "owner" && role !== "admin";
    places.people.hidden = panel.hidden;
    places.space.hidden = role !== "owner";
    summarize();
    if (panel.hidden || loaded) return;
    loaded = true;
    refresh();
    // The space's name for the summary.
    if (record.space) space.refresh(record.space).then(summarize);
  }

  return { panel, show, places };
}
