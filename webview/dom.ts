/**
 * Tiny DOM helpers for the panel webview. Untrusted text (session content, paths, summaries)
 * only ever goes in through `textContent`/attributes here, as `visibleText` (control characters
 * and bidi overrides as their visible `\uXXXX`, like the CLI and the VS Code labels); markdown
 * goes through `markdown.ts`.
 */

import { visibleText } from "../src/shared/untrusted";

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | null | EventListener>;

/** Create an element: `h("div", {class: "x", onclick: fn}, "text", child)`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K];
export function h(tag: string, attrs?: Attrs | null, ...children: Child[]): HTMLElement;
export function h(tag: string, attrs?: Attrs | null, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  if (attrs) setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** Create an SVG element. */
export function s(
  tag: string,
  attrs?: Record<string, string | number | undefined>,
  ...children: (SVGElement | null | undefined)[]
): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  for (const c of children) if (c) el.appendChild(c);
  return el;
}

function setAttrs(el: HTMLElement, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v as EventListener);
    else if (k === "class") el.className = String(v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, visibleText(String(v)));
  }
}

/** Append children (strings become text nodes). */
export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" ? document.createTextNode(visibleText(c)) : c);
  }
}

/** A codicon (`<vscode-icon name=…>`). */
export function icon(name: string, attrs: Attrs = {}): HTMLElement {
  return h("vscode-icon", { name, ...attrs });
}
