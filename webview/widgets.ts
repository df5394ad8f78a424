/**
 * Building blocks more than one section uses: a labelled action button that posts a command, and
 * a collapsible section whose open state is kept in the UI state.
 */

import type { WebviewMessage } from "../src/shared/protocol";
import { append, h } from "./dom";
import type { Send, View } from "./view";

/** An action: `[id, codicon, label, message, enabled, title]`. */
export type Action = [
  id: string,
  icon: string,
  label: string,
  message: WebviewMessage,
  enabled: boolean,
  title: string,
];

/**
 * A secondary `<vscode-button>` with an icon and a label that posts `message` when clicked.
 * `data-action` = `id`, `data-key` = `action-<id>` (focus is restored by key across renders).
 */
export function actionButton(
  send: Send,
  id: string,
  iconName: string,
  label: string,
  message: WebviewMessage,
  enabled: boolean,
  title?: string,
): HTMLElement {
  const b = h(
    "vscode-button",
    {
      secondary: true,
      icon: iconName,
      "data-action": id,
      "data-key": `action-${id}`,
      title: title ?? label,
      "aria-label": title ?? label,
      disabled: !enabled,
    },
    label,
  );
  b.addEventListener("click", () => send(message));
  return b;
}

/** The buttons of a list of {@link Action}s. */
export function actionButtons(send: Send, actions: Action[]): HTMLElement[] {
  return actions.map(([id, ic, label, msg, on, title]) => actionButton(send, id, ic, label, msg, on, title));
}

/**
 * A `<vscode-collapsible>` section (`data-section` = `key`), open unless the user closed it
 * (`ui.openSections[key]`, saved on toggle).
 */
export function collapsible(view: View, key: string, heading: string, description: string, body: Node[]): HTMLElement {
  const c = h("vscode-collapsible", { heading, description, "data-section": key });
  if (view.ui.openSections[key] !== false) c.setAttribute("open", "");
  c.addEventListener("vsc-collapsible-toggle", (ev) => {
    view.ui.openSections[key] = (ev as CustomEvent<{ open: boolean }>).detail.open;
    view.saveUi();
  });
  append(c, body);
  return c;
}
