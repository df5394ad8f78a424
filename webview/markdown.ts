/**
 * Summaries are LLM output: untrusted. Render them with a real markdown renderer (`marked`, GFM)
 * and sanitise the HTML with DOMPurify before it touches the DOM: no scripts, styles, images,
 * forms, frames or SVG; links are kept as text (their target in the title), never navigable.
 */

import DOMPurify from "dompurify";
import { marked } from "marked";
import { visibleText } from "../src/shared/untrusted";
import { fileBlocksToMarkdown } from "../src/shared/summaryMarkdown";

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      const href = node.getAttribute("href");
      node.removeAttribute("href");
      node.removeAttribute("target");
      if (href) node.setAttribute("title", href);
      node.setAttribute("class", "md-link");
    }
  });
}

/** Sanitised fragments of the last markdown texts rendered (a panel renders the same summaries on every update). */
const rendered = new Map<string, DocumentFragment>();
/** How many texts {@link rendered} keeps (the oldest is dropped first). */
const RENDERED_MAX = 32;

/** Markdown → a sanitised DocumentFragment (a copy of the one made for the same text before). */
export function renderMarkdown(markdown: string): DocumentFragment {
  let fragment = rendered.get(markdown);
  if (fragment) {
    rendered.delete(markdown);
  } else {
    fragment = sanitise(markdown);
    if (rendered.size >= RENDERED_MAX) rendered.delete(rendered.keys().next().value as string);
  }
  rendered.set(markdown, fragment);
  return fragment.cloneNode(true) as DocumentFragment;
}

/**
 * The sanitised fragment of one markdown text, its text shown as text everywhere else is:
 * control characters and bidi overrides as their visible `\uXXXX` (`visibleText`), also in the
 * titles that hold a link's target.
 */
function sanitise(markdown: string): DocumentFragment {
  hook();
  const html = marked.parse(fileBlocksToMarkdown(markdown), { async: false, gfm: true, breaks: false }) as string;
  const fragment = DOMPurify.sanitize(html, {
    RETURN_DOM_FRAGMENT: true,
    USE_PROFILES: { html: true },
    FORBID_TAGS: [
      "img",
      "style",
      "form",
      "input",
      "button",
      "textarea",
      "select",
      "iframe",
      "object",
      "embed",
      "svg",
      "math",
      "video",
      "audio",
      "source",
      "link",
      "meta",
      "base",
    ],
    FORBID_ATTR: ["style", "class", "id", "srcset", "src", "action", "formaction"],
  });
  const walker = document.createTreeWalker(fragment, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue ?? "";
    const shown = visibleText(text);
    if (shown !== text) node.nodeValue = shown;
  }
  for (const el of fragment.querySelectorAll("[title]"))
    el.setAttribute("title", visibleText(el.getAttribute("title") ?? ""));
  return fragment;
}
