/**
 * Keyboard focus in the panel: Tab and Shift+Tab cycle through the panel's own interactive elements
 * (like the other parts of VS Code's editor area) instead of leaving the webview for the page body,
 * where the focus would be invisible. F6 / Ctrl+Shift+E and the other workbench shortcuts still
 * move the focus out (VS Code handles them before the webview).
 */

/** What can hold the focus by Tab, in document order (visible elements with tabIndex ≥ 0). */
export function tabStops(root: HTMLElement): HTMLElement[] {
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

/**
 * One Tab stop for a group of buttons (the WAI-ARIA roving tabindex): the group is reached by Tab
 * once, at the button last used (first at the start); the arrow keys move within it (Right/Down
 * next, Left/Up previous, wrapping), Home and End go to its ends. A long row of chips — what a
 * compaction lost — no longer costs the keyboard user one Tab press per chip.
 * @param group the container (gets `role="group"` and `aria-label` = `label`)
 * @param buttons the group's buttons, in order (disabled ones are skipped by the arrows)
 */
export function rovingFocus(group: HTMLElement, buttons: HTMLButtonElement[], label: string): void {
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", label);
  const usable = () => buttons.filter((b) => !b.disabled);
  const current = (b: HTMLButtonElement) => {
    for (const x of buttons) x.tabIndex = x === b ? 0 : -1;
  };
  const first = usable()[0];
  for (const b of buttons) b.tabIndex = -1;
  if (first) first.tabIndex = 0;
  group.addEventListener("keydown", (ev) => {
    const list = usable();
    const at = list.indexOf(ev.target as HTMLButtonElement);
    if (at < 0 || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    let next: number;
    if (ev.key === "ArrowRight" || ev.key === "ArrowDown") next = (at + 1) % list.length;
    else if (ev.key === "ArrowLeft" || ev.key === "ArrowUp") next = (at - 1 + list.length) % list.length;
    else if (ev.key === "Home") next = 0;
    else if (ev.key === "End") next = list.length - 1;
    else return;
    ev.preventDefault();
    current(list[next]!);
    list[next]!.focus();
  });
  group.addEventListener("focusin", (ev) => {
    if (buttons.includes(ev.target as HTMLButtonElement)) current(ev.target as HTMLButtonElement);
  });
}
