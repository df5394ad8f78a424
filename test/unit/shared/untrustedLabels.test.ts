/**
 * Session text in VS Code labels (issue 18's kind, fixes3 item 1): quick-pick labels, descriptions
 * and details and status-bar text render `$(name)` as a codicon, input-box prompts also render
 * `[label](command:…)` links, and every label shows control characters as boxes. The helpers of
 * `shared/untrusted.ts` are checked against VS Code's own renderer rule (`renderLabelWithIcons` and
 * `ThemeIcon.iconNameExpression` / `iconModifierExpression`, as in the code-server 4.139.1 bundle the
 * integration tests run): nothing becomes an icon, the text is all there, controls show as `\uXXXX`.
 */

import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import fc from "fast-check";
import { iconLabelText, inputMessageText, terminalText, visibleText } from "../../../src/shared/untrusted";

/** VS Code's `renderLabelWithIcons`: text and the icons it would draw (an escaped icon is text). */
function renderLabel(text: string): { text: string; icons: string[] } {
  const re = /(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;
  let shown = "";
  const icons: string[] = [];
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    shown += text.slice(at, m.index);
    at = m.index + m[0].length;
    if (m[1]) shown += `$(${m[2]})`;
    else icons.push(m[2]!);
  }
  return { text: shown + text.slice(at), icons };
}

/** VS Code's `parseLinkedText` link syntax (quick-input messages, notifications). */
const LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

const HOSTILE =
  "$(bug) $(sync~spin) fix $(x) [run](command:workbench.action.terminal.new) \u001b[31mred\u001b[0m \u202eevil";

describe("session text in VS Code labels", () => {
  it("a hostile session name renders no icon, keeps its text, shows ESC and bidi overrides as \\uXXXX", () => {
    const r = renderLabel(iconLabelText(HOSTILE));
    assert.deepEqual(r.icons, []);
    assert.equal(
      r.text,
      "$(bug) $(sync~spin) fix $(x) [run](command:workbench.action.terminal.new) \\u001b[31mred\\u001b[0m \\u202eevil",
    );
    // without the helper VS Code would draw three icons and swallow their names
    assert.deepEqual(renderLabel(HOSTILE).icons, ["bug", "sync~spin", "x"]);
  });

  it("our own icons composed around escaped text still render", () => {
    const r = renderLabel(`$(check) ${iconLabelText("$(pinned) name")}`);
    assert.deepEqual(r.icons, ["check"]);
    assert.equal(r.text, " $(pinned) name");
  });

  it("a `$(` that is no icon gets no backslash (it would show)", () => {
    for (const s of ["cost $(5 dollars)", "$(a~b~c)", "$(", "a $() b", "$(x y)"]) {
      assert.equal(iconLabelText(s), s);
      assert.equal(renderLabel(s).text, s);
    }
  });

  it("control characters are the same visible escapes as in the CLI", () => {
    const s = "a\u0000b\u0007c\u001bd\u007fe\u009bf\u200eg\r\nh\ti\nj";
    assert.equal(visibleText(s), terminalText(s));
    assert.equal(visibleText(s), "a\\u0000b\\u0007c\\u001bd\\u007fe\\u009bf\\u200eg\nh\ti\nj");
    assert.equal(iconLabelText(s), visibleText(s));
  });

  it("input-box messages: no icon and no link (VS Code runs command links there)", () => {
    const m = inputMessageText(HOSTILE);
    assert.deepEqual(renderLabel(m).icons, []);
    assert.equal([...m.matchAll(LINK)].length, 0);
    assert.equal(m.replace(/\u200b/g, ""), iconLabelText(HOSTILE));
  });

  it("property: no icon, all of the text, idempotent — for any string", () => {
    const unit = fc.constantFrom("$", "(", ")", "\\", "~", "a", "Z", "0", "-", " ", "\u001b", "\r", "\n", "]", "[");
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), (chars) => {
        const s = chars.join("");
        const once = iconLabelText(s);
        assert.equal(iconLabelText(once), once, "idempotent");
        const r = renderLabel(once);
        assert.deepEqual(r.icons, [], JSON.stringify(s));
        // what shows is the visible text; the one loss: a `\$(name)` already in the text shows as `$(name)`
        const expected = visibleText(s).replace(/(\\)?\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g, (m) =>
          m.startsWith("\\") ? m.slice(1) : m,
        );
        assert.equal(r.text, expected, JSON.stringify(s));
        const message = inputMessageText(s);
        assert.equal(inputMessageText(message), message, "idempotent");
        assert.deepEqual(renderLabel(message).icons, []);
      }),
    );
  });
});
