// @ts-check
// The share dialog's sharing within the service (card-share.js holds the dialog
// and its links): "People" shares the record with a login as viewer or editor,
// lists the direct shares and revokes one (the owner and a space's admin);
// "Space" moves the record into one of the owner's spaces where they may add
// records, or out of any (the owner only). What each may do is the server's
// answer (docs/sharing.md); these parts are shown to whom it allows.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").Share} Share */
/** @typedef {import("./types.js").Space} Space */

export const SHARE_ROLES = /** @type {const} */ (["viewer", "editor"]);
// A space's roles that may file a record there (the server decides again).
const FILING_ROLES = new Set(["editor", "admin"]);

/**
 * @param {Share} share
 * @param {(share: Share) => void} revoke
 */
function shareRow(share, revoke) {
  const button = h("button", { type: "button", class: "button button-danger" },
    t("share.unshare"));
  button.addEventListener("click", () => revoke(share));
  return h("li", { class: "share-person", "data-login": share.login },
    h("strong", {}, share.login), " ",
    h("span", { class: "muted" }, t(`share.role_${share.role}`)), button);
}

/**
 * The people a record is shared with, and a form to share it with one more.
 * @param {{id: string, status: HTMLElement, changed: () => void}} context
 */
export function peoplePart({ id, status, changed }) {
  const list = h("ul", { class: "share-people-list" });
  const none = h("p", { class: "muted" }, t("share.no_people"));
  const login = h("input", { type: "text", id: "share-login", required: true,
    maxlength: 255, autocomplete: "off", autocapitalize: "none", spellcheck: "false" });
  const role = h("select", { id: "share-role" },
    SHARE_ROLES.map((name) => h("option", { value: name }, t(`share.role_${name}`))));
  const submit = h("button", { type: "submit", class: "button button-primary" },
    t("share.share"));
  const form = h("form", { class: "share-form share-person-form" },
    h("p", { class: "field" }, h("label", { for: "share-login" }, t("share.login")), login),
    h("p", { class: "field" }, h("label", { for: "share-role" }, t("share.role")), role),
    h("p", {}, submit));
  const element = h("div", {}, h("p", { class: "muted small" }, t("share.people_intro")),
    list, none, form);

  async function refresh() {
    try {
      const { items } = await api.listShares(id);
      replace(list, items.map((share) => shareRow(share, revoke)));
      list.hidden = items.length === 0;
      none.hidden = items.length !== 0;
    } catch (error) {
      status.textContent = error.message;
    }
  }

  /** @param {Share} share */
  async function revoke(share) {
    if (!window.confirm(t("share.unshare_confirm", { login: share.login }))) return;
    try {
      await api.unshareRecord(id, share.login);
      status.textContent = t("share.unshared", { login: share.login });
      await refresh();
      changed();
    } catch (error) {
      status.textContent = error.message;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const who = login.value.trim();
    if (!who) return;
    submit.disabled = true;
    try {
      const chosen = /** @type {"viewer" | "editor"} */ (role.value);
      await api.shareRecord(id, { login: who, role: chosen });
      status.textContent = t("share.shared", { login: who });
      login.value = "";
      await refresh();
      changed();
    } catch (error) {
      status.textContent = error.message;
    } finally {
      submit.disabled = false;
    }
  });

  return { element, refresh };
}

/**
 * The record's space: where it is, and a move into another of the owner's spaces
 * (one where they may add records) or out of any.
 * @param {{id: string, status: HTMLElement, changed: () => void}} context
 */
export function spacePart({ id, status, changed }) {
  const where = h("p", {});
  const choice = h("select", { id: "share-space-choice" });
  const move = h("button", { type: "submit", class: "button button-primary" }, t("share.move"));
  const form = h("form", { class: "share-form share-space-form" },
    h("p", { class: "field" }, h("label", { for: "share-space-choice" }, t("share.move_to")),
      choice),
    h("p", {}, move));
  const element = h("div", {}, where, form);
  /** @type {string | null} */
  let current = null;
  /** @type {Space[]} */
  let known = [];

  /** @param {string | null} spaceId */
  function nameOf(spaceId) {
    return known.find((space) => space.id === spaceId)?.name ?? spaceId ?? "";
  }

  function draw() {
    where.textContent = current
      ? t("share.in_space", { name: nameOf(current) }) : t("share.in_no_space");
    const open = known.filter((space) => FILING_ROLES.has(space.role)
      || space.id === current);
    replace(choice,
      h("option", { value: "", selected: current === null }, t("share.no_space")),
      open.map((space) => h("option", { value: space.id, selected: space.id === current },
        space.name)));
    form.hidden = open.length === 0 && current === null;
  }

  /** @param {string | null} spaceId the record's space now */
  async function refresh(spaceId) {
    current = spaceId;
    try {
      known = (await api.spaces()).items;
    } catch (error) {
      status.textContent = error.message;
    }
    draw();
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const target = choice.value || null;
    if (target === current) return;
    move.disabled = true;
    try {
      const record = await api.editRecord(id, { space: target });
      current = record.space ?? null;
      status.textContent = current
        ? t("share.moved", { name: nameOf(current) }) : t("share.moved_out");
      draw();
      changed();
    } catch (error) {
      status.textContent = error.message;
    } finally {
      move.disabled = false;
    }
  });

  return { element, refresh, nameOf };
}
