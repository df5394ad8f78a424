/**
 * Where pi's numbers come from, in words, for every surface (status-bar tooltip, panel, CLI).
 * Plain text: escape it for Markdown where it goes into Markdown.
 */

import type { ResolvedWindow } from "../core/rules/inspect";

/**
 * Where a context window came from, in words: `models.json: providers.scripted, model
 * scripted-small`, `pi 1.5.2's model catalog (openai/gpt-4o)`, `pi-context's snapshot of pi
 * 1.6.0's catalog (openai/gpt-4o)`, `models-store.json: cached catalog for openai`, `the running pi
 * (pi 1.6.0, pid 42)`. Plain text (escape it for Markdown).
 * @param place `where` (default): the place inside the file, without its path (the tooltip and the
 *   panel name the file separately); `file`: the file's path and the place (`models.json:
 *   /…/models.json (providers.scripted.models, id scripted-small)`, for the CLI).
 */
export function windowSourceText(
  w: Pick<ResolvedWindow, "source" | "detail" | "where" | "catalog">,
  place: "where" | "file" = "where",
): string {
  const at = place === "file" ? (w.detail ?? w.where) : w.where;
  switch (w.source) {
    case "catalog":
      if (place === "file" && w.catalog && w.detail) return w.detail;
      return `${w.catalog ?? "pi's built-in model catalog"}${w.where ? ` (${w.where})` : ""}`;
    case "models-store":
      return `models-store.json${at ? `: ${at}` : ""}`;
    case "models-json":
    case "models-json-override":
      return `models.json${at ? `: ${at}` : ""}`;
    case "live":
      return `the running pi${w.detail ? ` (${w.detail})` : ""}`;
    case "given":
      return "given explicitly (--context-window)";
    case "unknown":
      return w.detail ?? "unknown";
  }
}
