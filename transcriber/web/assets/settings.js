// @ts-check
// The settings page (`/settings`): one section per kind of thing the user
// sets up for other programs. Each section renders itself and returns its
// cleanup; the display section (card-quality.js) is one checkbox kept in this browser.

import { qualitySettings } from "./card-quality.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { vocabularySettings } from "./vocabulary.js";
import { renderWebhooks } from "./webhooks.js";

/** @param {HTMLElement} main */
export function renderSettings(main) {
  document.title = t("title.settings");
  const webhooks = h("section", { class: "panel", "aria-labelledby": "webhooks-heading" });
  const vocabulary = vocabularySettings();
  replace(main,
    h("div", { class: "view-head" }, h("h1", { tabindex: "-1" }, t("settings.heading"))),
    webhooks, vocabulary.section, qualitySettings());
  const cleanups = [renderWebhooks(webhooks), vocabulary.cleanup];
  const heading = webhooks.querySelector("h2");
  if (heading) heading.id = "webhooks-heading";
  return () => cleanups.forEach((cleanup) => cleanup());
}
