// @ts-check
// Building the page without ever parsing server strings as HTML: every
// text goes through a text node, every attribute through setAttribute.

/**
 * An attribute's value: `on<event>` takes a listener.
 * @typedef {Record<string, string | number | boolean | null | undefined | ((event: any) => void)>} Attrs
 */
/** @typedef {Node | string | number | boolean | null | undefined | ChildList} Child */
/** @typedef {Child[]} ChildList */

/**
 * h("a", {href: "/x", class: "link"}, "text", child) → an element.
 * Attributes: `on<event>` (a function) adds a listener; `true` sets a
 * boolean attribute; `false`, null and undefined leave it out.
 * Children: strings and numbers become text nodes; null/false are skipped;
 * arrays are flattened.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * @template {Element} E
 * @param {E} parent
 * @param {Child[]} children
 * @returns {E}
 */
export function append(parent, children) {
  for (const child of /** @type {unknown[]} */ (children).flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/**
 * Replace everything inside `parent` with `children`.
 * @template {Element} E
 * @param {E} parent
 * @param {...Child} children
 * @returns {E}
 */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/**
 * `input` in place of `shown`, focused: Esc closes it, Enter disables it and
 * awaits `save(close)`; if that throws, the input is enabled again and
 * `failed(error, close)` says why. `closed` runs whenever it closes.
 * @param {HTMLElement} shown
 * @param {HTMLInputElement} input
 * @param {{
 *   save: (close: () => void) => Promise<void>,
 *   failed: (error: Error & {code?: string}, close: () => void) => void,
 *   closed: () => void,
 * }} handlers
 */
export function editInPlace(shown, input, { save, failed, closed }) {
  shown.hidden = true;
  shown.after(input);
  input.focus();
  const close = () => {
    input.remove();
    shown.hidden = false;
    closed();
  };
  input.addEventListener("keydown", async (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Enter") {
      event.preventDefault();
      input.disabled = true;
      try {
        await save(close);
      } catch (error) {
        input.disabled = false;
        failed(error, close);
      }
    }
  });
}
