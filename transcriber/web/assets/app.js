// @ts-check
// The web app's entry: the user from /app/me, a router on the history API,
// and one view at a time in <main>. Views return a cleanup function that
// stops their timers and requests when the user goes elsewhere.

import * as api from "./api.js";
import { replace, h } from "./dom.js";
import { renderList } from "./list.js";
import { renderUpload } from "./upload.js";
import { renderCard } from "./card.js";
import { renderSettings } from "./settings.js";
import { renderVoices } from "./voices.js";
import { renderTokens } from "./tokens.js";
import { renderAsk } from "./ask.js";
import { LANGUAGES, language, setLanguage, t, translatePage } from "./i18n.js";

/** @typedef {import("./types.js").ViewContext} ViewContext */
/**
 * @typedef {object} Route
 * @property {RegExp} pattern
 * @property {string | null} nav the menu entry marked current
 * @property {(found: RegExpExecArray, ctx: ViewContext) => (() => void) | void} view
 */

/**
 * An element the page (index.html) always has.
 * @param {string} id
 */
function pageElement(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`index.html has no #${id}`);
  return found;
}

const main = pageElement("main");
const who = pageElement("who");
/** @type {() => void} */
let cleanup = () => {};

// Paths the server answers with this page (transcriber/web/spa.py CLIENT_ROUTES).
/** @type {Route[]} */
const ROUTES = [
  { pattern: /^\/$/, nav: "list", view: (_m, ctx) => renderList(main, ctx) },
  { pattern: /^\/upload$/, nav: "upload", view: (_m, ctx) => {
    const done = renderUpload(main);
    sharedNotice(ctx.params);
    return done;
  } },
  { pattern: /^\/settings$/, nav: "settings", view: () => renderSettings(main) },
  { pattern: /^\/tokens$/, nav: "tokens", view: () => renderTokens(main) },
  { pattern: /^\/records\/([^/]+)$/, nav: null,
    view: (m, ctx) => renderCard(main, decodeURIComponent(m[1]), ctx) },
  { pattern: /^\/voices$/, nav: "voices", view: () => renderVoices(main) },
  { pattern: /^\/ask$/, nav: "ask", view: (_m, ctx) => renderAsk(main, ctx) },
];

// "Share → Transcriber" that did not become a record (sw.js sends the person here with
// `?shared=<why>`): say so above the upload area, so the file can be picked again.
/** @param {URLSearchParams} params */
function sharedNotice(params) {
  const why = params.get("shared");
  if (!why) return;
  const text = why === "offline" ? t("upload.shared_offline")
    : /^\d+$/.test(why) ? t("upload.shared_refused", { status: why }) : t("upload.shared_again");
  main.querySelector("h1")?.after(h("p", { class: "notice shared-notice", role: "alert" }, text));
}

/** @param {string} pathname */
function match(pathname) {
  for (const route of ROUTES) {
    const found = route.pattern.exec(pathname);
    if (found) return { route, found };
  }
  return null;
}

/**
 * @param {string | URL} url
 * @param {{replaceState?: boolean}} [options]
 */
export function navigate(url, { replaceState = false } = {}) {
  const target = new URL(url, window.location.href);
  if (replaceState) window.history.replaceState(null, "", target);
  else window.history.pushState(null, "", target);
  render({ focus: true });
}

/** @param {string | null} nav */
function markNav(nav) {
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (!(link instanceof HTMLElement)) continue;
    if (link.dataset.nav === nav) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/** @param {{focus: boolean}} options */
function render({ focus }) {
  cleanup();
  cleanup = () => {};
  const location = window.location;
  const hit = match(location.pathname);
  const ctx = { navigate, params: new URLSearchParams(location.search) };
  if (!hit) {
    markNav(null);
    document.title = t("title.not_found");
    replace(main,
      h("h1", { tabindex: "-1" }, t("page.not_found")),
      h("p", {}, h("a", { href: "/" }, t("common.back_to_list"))));
  } else {
    markNav(hit.route.nav);
    cleanup = hit.route.view(hit.found, ctx) || (() => {});
  }
  if (focus) {
    // Move keyboard and screen reader focus to the new view's heading.
    const heading = main.querySelector("h1");
    (heading || main).focus({ preventScroll: false });
    window.scrollTo(0, 0);
  }
}

// Same-origin links to the app's own pages change the view without a reload.
document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.target instanceof Element ? event.target.closest("a") : null;
  if (link && !link.hasAttribute("href")) return;
  if (!link || link.hasAttribute("download") || link.target) return;
  const url = new URL(link.href, window.location.href);
  if (url.origin !== window.location.origin || !match(url.pathname)) return;
  if (url.pathname === window.location.pathname && url.search === window.location.search
      && url.hash) return;
  event.preventDefault();
  navigate(url);
});

window.addEventListener("popstate", () => render({ focus: true }));

/** @type {{login: string, name: string} | null} */
let user = null;

/** @param {Error | null} [error] */
function showUser(error = null) {
  if (error) replace(who, h("span", { class: "error-text" }, error.message));
  else if (user) {
    replace(who, t("nav.signed_in"), h("strong", { title: user.login }, user.name || user.login));
  }
}

async function loadUser() {
  try {
    user = await api.me();
    showUser();
  } catch (error) {
    showUser(error);
  }
}

// The language switch: remembered in this browser, applied to the view at once.
const picker = /** @type {HTMLSelectElement} */ (pageElement("language"));
for (const [code, name] of LANGUAGES) {
  picker.append(h("option", { value: code, selected: code === language() }, name));
}
picker.addEventListener("change", () => {
  setLanguage(picker.value);
  translatePage();
  showUser();
  render({ focus: false });
});

translatePage();
loadUser();
render({ focus: false });

// The app shell offline and the share target (sw.js). A browser without service
// workers, or one that refuses this one (a plain-HTTP host that is not localhost),
// runs the app as before.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(() => {});
}
