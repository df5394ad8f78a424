/**
 * The panel's words follow VS Code's display language. The host writes its l10n bundle
 * (`vscode.l10n.bundle`: the translations of `l10n/bundle.l10n.json` for that language) into the
 * document as a JSON data block (`<script type="application/json" id="pi-context-l10n">`, never
 * executed, see `src/panel/html.ts`); this module gives it to `@vscode/l10n` before any section
 * renders (`main.ts` imports it first, so its code runs before the sections' modules). In English
 * there is no block and `l10n.t` returns the English text with its placeholders filled.
 */

import * as l10n from "@vscode/l10n";

/** The id of the data block the host writes. */
export const L10N_ELEMENT_ID = "pi-context-l10n";

const data = document.getElementById(L10N_ELEMENT_ID)?.textContent;
if (data) {
  try {
    l10n.config({ contents: JSON.parse(data) as Record<string, string> });
  } catch {
    // a broken block: the English texts
  }
}
