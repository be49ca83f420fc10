// @ts-check
// The settings page's webhooks (docs/api.md "Webhooks"): the user's webhooks
// with their latest deliveries, a form to add one (its secret is shown once,
// right after), and deletion. The server checks the URL; its refusals are
// shown as it words them.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { when } from "./format.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").Webhook} Webhook */
/** @typedef {import("./types.js").WebhookDelivery} WebhookDelivery */

const EVENTS = ["record.done", "record.halted", "record.deleted"];

/** @param {string} event */
function eventLabel(event) {
  if (event === "record.done") return t("webhooks.event_done");
  if (event === "record.halted") return t("webhooks.event_halted");
  if (event === "record.deleted") return t("webhooks.event_deleted");
  return event;
}

/** @param {string} status */
function statusLabel(status) {
  if (status === "pending") return t("webhooks.status_pending");
  if (status === "delivered") return t("webhooks.status_delivered");
  if (status === "failed") return t("webhooks.status_failed");
  return status;
}

/** @param {WebhookDelivery} delivery */
function lastAnswer(delivery) {
  if (delivery.last_status !== null) return String(delivery.last_status);
  return delivery.last_error || "—";
}

/** @param {WebhookDelivery[]} items */
function deliveriesTable(items) {
  if (items.length === 0) return h("p", { class: "muted" }, t("webhooks.no_deliveries"));
  return h("table", { class: "history" },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, t("webhooks.col_event")),
      h("th", { scope: "col" }, t("webhooks.col_record")),
      h("th", { scope: "col" }, t("webhooks.col_status")),
      h("th", { scope: "col" }, t("webhooks.col_attempts")),
      h("th", { scope: "col" }, t("webhooks.col_next")),
      h("th", { scope: "col" }, t("webhooks.col_answer")))),
    h("tbody", {}, items.map((d) => h("tr", { "data-delivery": d.id },
      h("td", {}, eventLabel(d.event)),
      h("td", {}, d.event === "record.deleted" ? d.record_id
        : h("a", { href: `/records/${encodeURIComponent(d.record_id)}` }, d.record_id)),
      h("td", {}, statusLabel(d.status)),
      h("td", {}, String(d.attempts)),
      h("td", {}, d.next_attempt_at ? when(d.next_attempt_at) : "—"),
      h("td", {}, lastAnswer(d))))));
}

// A webhook whose target does not answer at all (timeout, connection, name,
// refused address) is backed off: its deliveries wait until the next try.
/** @param {Webhook} webhook */
function healthBadge(webhook) {
  if (webhook.disabled_at) {
    return h("span", { class: "badge badge-halted" }, t("webhooks.disabled_gone"));
  }
  const health = webhook.health || { state: "ok" };
  if (health.state === "failing") {
    return h("span", { class: "badge badge-halted", "data-health": "failing" },
      t("webhooks.failing"));
  }
  return h("span", { class: "badge badge-done", "data-health": "ok" }, t("webhooks.active"));
}

/** @param {Webhook} webhook */
function healthLine(webhook) {
  const health = webhook.health;
  if (webhook.disabled_at || !health || health.state !== "failing") return null;
  return h("div", { class: "record-meta error-text", "data-health-detail": "" },
    t("webhooks.failing_detail", {
      error: health.last_error || "—",
      next: health.next_attempt_at ? when(health.next_attempt_at) : "—",
    }));
}

/**
 * @param {Webhook} webhook
 * @param {{removed: () => void, failed: (error: Error) => void}} handlers
 */
function webhookItem(webhook, { removed, failed }) {
  const details = h("details", { class: "history-panel" },
    h("summary", {}, t("webhooks.deliveries")), h("p", { class: "muted" }, t("common.loading")));
  details.addEventListener("toggle", async () => {
    if (!details.open) return;
    try {
      const answer = await api.webhookDeliveries(webhook.id);
      replace(details, h("summary", {}, t("webhooks.deliveries")), deliveriesTable(answer.items));
    } catch (error) {
      replace(details, h("summary", {}, t("webhooks.deliveries")),
        h("p", { class: "error-text" }, error.message));
    }
  });
  const remove = h("button", { type: "button", class: "button button-danger button-quiet" },
    t("webhooks.delete"));
  remove.addEventListener("click", async () => {
    if (!window.confirm(t("webhooks.delete_confirm"))) return;
    try {
      await api.deleteWebhook(webhook.id);
      removed();
    } catch (error) {
      failed(error);
    }
  });
  return h("li", { class: "record", "data-webhook": webhook.id },
    h("div", { class: "record-main" },
      h("span", { class: "record-link webhook-url" }, webhook.url),
      healthBadge(webhook), remove),
    h("div", { class: "record-meta" },
      webhook.events.map(eventLabel).join(" · "), " · ", when(webhook.created_at)),
    healthLine(webhook),
    details);
}

/** @param {{added: (made: Webhook & {secret: string}) => void}} handlers */
function addForm({ added }) {
  const url = h("input", { id: "webhook-url", type: "url", name: "url", required: true,
    maxlength: "2048", autocomplete: "off" });
  const boxes = EVENTS.map((event) => h("input", { type: "checkbox", name: "events",
    value: event, id: `webhook-${event.replace(".", "-")}`, checked: event !== "record.deleted" }));
  const secret = h("input", { id: "webhook-secret", type: "text", name: "secret",
    minlength: "16", maxlength: "256", autocomplete: "off" });
  const note = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const save = h("button", { type: "submit", class: "button button-primary" }, t("webhooks.add"));
  const form = h("form", { class: "edit webhook-form" },
    h("h3", {}, t("webhooks.add_heading")),
    h("label", { for: "webhook-url" }, t("webhooks.url")), url,
    h("fieldset", { class: "webhook-events" }, h("legend", {}, t("webhooks.events")),
      boxes.map((box) => h("label", { for: box.id }, box, " ", eventLabel(box.value)))),
    h("label", { for: "webhook-secret" }, t("webhooks.secret")), secret,
    h("p", { class: "muted small" }, t("webhooks.secret_hint")),
    h("div", { class: "actions" }, save), note);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const events = boxes.filter((box) => box.checked).map((box) => box.value);
    if (events.length === 0) {
      replace(note, h("span", { class: "error-text" }, t("webhooks.no_events")));
      return;
    }
    save.disabled = true;
    note.textContent = t("webhooks.adding");
    try {
      /** @type {Parameters<typeof api.createWebhook>[0]} */
      const body = { url: url.value.trim(), events };
      if (secret.value) body.secret = secret.value;
      const made = await api.createWebhook(body);
      url.value = "";
      secret.value = "";
      note.textContent = "";
      added(made);
    } catch (error) {
      replace(note, h("span", { class: "error-text", role: "alert" }, error.message));
    } finally {
      save.disabled = false;
    }
  });
  return form;
}

/**
 * The secret of a webhook just made: shown this once.
 * @param {{secret: string}} made
 */
function secretShown(made) {
  const value = h("input", { type: "text", readonly: true, value: made.secret,
    class: "webhook-secret-value", "aria-label": t("webhooks.secret"),
    "data-testid": "webhook-secret" });
  value.addEventListener("focus", () => value.select());
  return h("div", { class: "panel webhook-secret", role: "alert" },
    h("p", {}, h("strong", {}, t("webhooks.secret_once"))), value);
}

/**
 * The webhooks section, in `section`; returns its cleanup.
 * @param {HTMLElement} section
 * @returns {() => void}
 */
export function renderWebhooks(section) {
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const list = h("ul", { class: "records", "aria-label": t("webhooks.heading") });
  const fresh = h("div", {});
  let closed = false;

  async function load() {
    status.textContent = t("common.loading");
    try {
      const answer = await api.webhooks();
      if (closed) return;
      replace(list, answer.items.map((webhook) => webhookItem(webhook, {
        removed: () => { fresh.replaceChildren(); load(); },
        failed: (error) => replace(status, h("span", { class: "error-text" }, error.message)),
      })));
      status.textContent = answer.items.length ? "" : t("webhooks.none");
    } catch (error) {
      replace(status, h("span", { class: "error-text" }, error.message));
    }
  }

  replace(section,
    h("h2", {}, t("webhooks.heading")),
    h("p", { class: "muted" }, t("webhooks.intro")),
    status, list, fresh,
    addForm({ added: (made) => { replace(fresh, secretShown(made)); load(); } }));
  load();
  return () => { closed = true; };
}
