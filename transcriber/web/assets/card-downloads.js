// @ts-check
// The card's downloads: the original, the normalized copy once made, and the
// transcript in each export format once there is one.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { size } from "./format.js";
import { t } from "./i18n.js";

/** @typedef {import("./types.js").RecordCard} RecordCard */

export const TRANSCRIPT_FORMATS = ["txt", "srt", "vtt", "json", "md", "docx"];

/** @param {string} id */
export function downloadPanel(id) {
  const list = h("ul", { class: "downloads" });
  const panel = h("section", { class: "panel downloads-panel", "aria-labelledby": "download-h",
    hidden: true }, h("h2", { id: "download-h" }, t("card.download")), list);

  /** @param {RecordCard} record */
  function show(record) {
    const items = [
      h("li", {}, h("a", { href: api.fileUrl(id, "original"), download: "" },
        t("download.original")),
      " ", h("span", { class: "muted" }, size(record.files?.original?.size_bytes))),
    ];
    if (record.files?.normalized) {
      items.push(h("li", {},
        h("a", { href: api.fileUrl(id, "normalized"), download: "" }, t("download.normalized")),
        " ", h("span", { class: "muted" }, size(record.files.normalized.size_bytes))));
    }
    if (record.utterances.length || record.transcript) {
      items.push(h("li", {}, t("download.transcript"),
        TRANSCRIPT_FORMATS.map((format, index) => [
          index ? ", " : "",
          h("a", { href: api.transcriptUrl(id, format), download: "",
            "data-format": format, title: t(`format.${format}`) }, format.toUpperCase()),
        ])));
    }
    replace(list, items);
    panel.hidden = false;
  }

  return { panel, show };
}
