/**
 * Keyboard focus in the panel: Tab and Shift+Tab cycle through the panel's own interactive elements
 * (like the other parts of VS Code's editor area) instead of leaving the webview for the page body,
 * where the focus would be invisible. F6 / Ctrl+Shift+E and the other workbench shortcuts still
 * move the focus out (VS Code handles them before the webview).
 */

/** What can hold the focus by Tab, in document order (visible elements with tabIndex ≥ 0). */
function tabStops(root: HTMLElement): HTMLElement[] {
  const all = root.querySelectorAll<HTMLElement>(
    "a[href], button, input, select, textarea, [tabindex], vscode-button, vscode-textfield, vscode-single-select, vscode-checkbox, vscode-toolbar-button, vscode-collapsible, summary",
  );
  return [...all].filter((e) => e.tabIndex >= 0 && !e.hasAttribute("disabled") && e.getClientRects().length > 0);
}

/** The light-DOM element holding the focus (a vscode-element's host when its inner control has it). */
function focused(): Element | null {
  return document.activeElement;
}

/** Cycle Tab / Shift+Tab within `root` (call once). */
export function wrapTabFocus(root: HTMLElement): void {
  document.addEventListener(
    "keydown",
    (ev) => {
      if (ev.key !== "Tab" || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      const stops = tabStops(root);
      if (stops.length === 0) return;
      const active = focused();
      const first = stops[0]!;
      const last = stops[stops.length - 1]!;
      const at = (e: HTMLElement) => active === e || (active instanceof Node && e.contains(active));
      if (!ev.shiftKey && (at(last) || !active || active === document.body)) {
        ev.preventDefault();
        first.focus();
      } else if (ev.shiftKey && (at(first) || !active || active === document.body)) {
        ev.preventDefault();
        last.focus();
      }
    },
    true,
  );
}
