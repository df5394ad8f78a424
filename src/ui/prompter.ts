/**
 * Quick picks and input boxes of a surface (the session tree's questions, "Pi Context: Trim Context…"),
 * recorded in order so the integration tests can check which questions were asked and answer the
 * one on screen (`SessionTreeView.prompts` / `currentPrompt()`, `TrimApi.prompts`).
 */

import * as vscode from "vscode";
import { iconLabelText, inputMessageText, visibleText } from "../shared/untrusted";

/**
 * Quick-pick items as VS Code may show them: descriptions and details through `iconLabelText`
 * (session text in them — names, paths, entry texts, error bodies — renders no `$(icon)` and no
 * control character; none of ours carries an icon there). Labels keep our leading `$(icon)`, so
 * each surface escapes the session text it puts into a label itself (`iconLabelText`, idempotent).
 * Every quick pick of the extension goes through this (the `Prompter`, and `showQuickPick` callers).
 */
export function safePickItems<T extends vscode.QuickPickItem>(items: readonly T[]): T[] {
  return items.map((i) =>
    i.description === undefined && i.detail === undefined
      ? i
      : {
          ...i,
          ...(i.description !== undefined ? { description: iconLabelText(i.description) } : {}),
          ...(i.detail !== undefined ? { detail: iconLabelText(i.detail) } : {}),
        },
  );
}

/**
 * A question the tree view asked, in order (`SessionTreeView.prompts`): what tests check for the
 * order of prompts. `apiKey` is the summarizer's password box (`askApiKey`); it never records the key.
 */
export interface PromptRecord {
  kind: "pick" | "input" | "apiKey";
  title: string;
  /** Quick pick: the items' labels. */
  items?: string[];
}

/** The question on screen (`currentPrompt()`): the real quick input, for tests to answer. */
export type OpenPrompt =
  | { kind: "pick"; title: string; quickPick: vscode.QuickPick<vscode.QuickPickItem> }
  | { kind: "input"; title: string; inputBox: vscode.InputBox };

/** Quick picks and input boxes of one surface, recorded (see {@link PromptRecord}). */
export class Prompter {
  readonly log: PromptRecord[] = [];
  current: OpenPrompt | undefined;

  /** Record that the summarizer asks for its API key for `origin` (its own password box; the key is never recorded). */
  apiKey(origin: string): void {
    this.log.push({ kind: "apiKey", title: vscode.l10n.t("API Key for {0}", origin) });
  }

  /**
   * A quick pick; resolves with the accepted item or undefined (Escape).
   * @param keepOpen items that do not close the pick when accepted (e.g. listed entries).
   */
  pick<T extends vscode.QuickPickItem>(
    items: T[],
    options: { title: string; placeholder?: string; keepOpen?: (item: T) => boolean },
  ): Promise<T | undefined> {
    return this.showPick(items, options, (qp, original, finish) => {
      const active = qp.activeItems[0] ?? qp.selectedItems[0];
      const item = active && (original.get(active) ?? active);
      if (!item || options.keepOpen?.(item)) return;
      finish(item);
    });
  }

  /**
   * A multi-select quick pick; resolves with the accepted selection (possibly empty) or undefined (Escape).
   * @param selected the items checked at the start.
   */
  pickMany<T extends vscode.QuickPickItem>(
    items: T[],
    options: { title: string; placeholder?: string; selected?: readonly T[] },
  ): Promise<T[] | undefined> {
    return this.showPick(
      items,
      options,
      (qp, original, finish) => finish(qp.selectedItems.map((i) => original.get(i) ?? i)),
      (qp, shown) => {
        qp.canSelectMany = true;
        qp.matchOnDetail = true;
        if (options.selected) qp.selectedItems = shown.filter((_, i) => options.selected!.includes(items[i]!));
      },
    );
  }

  /**
   * Show `items` (through {@link safePickItems}) in a recorded quick pick that stays open when the
   * focus leaves; `onAccept` decides what an accept resolves with (`original` maps a shown item
   * back to the caller's), Escape or hiding resolves undefined.
   */
  private showPick<T extends vscode.QuickPickItem, R>(
    items: T[],
    options: { title: string; placeholder?: string },
    onAccept: (qp: vscode.QuickPick<T>, original: Map<T, T>, finish: (value: R) => void) => void,
    setUp?: (qp: vscode.QuickPick<T>, shown: T[]) => void,
  ): Promise<R | undefined> {
    const qp = vscode.window.createQuickPick<T>();
    qp.title = visibleText(options.title);
    if (options.placeholder) qp.placeholder = visibleText(options.placeholder);
    const shown = safePickItems(items);
    const original = new Map(shown.map((s, i) => [s, items[i]!]));
    qp.items = shown;
    setUp?.(qp, shown);
    qp.ignoreFocusOut = true;
    qp.matchOnDescription = true;
    this.log.push({
      kind: "pick",
      title: options.title,
      items: items.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator).map((i) => i.label),
    });
    const quickPick = qp as unknown as vscode.QuickPick<vscode.QuickPickItem>;
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: R | undefined) => {
        if (done) return;
        done = true;
        if (this.current?.kind === "pick" && this.current.quickPick === quickPick) this.current = undefined;
        resolve(value);
        qp.dispose();
      };
      qp.onDidAccept(() => onAccept(qp, original, finish));
      qp.onDidHide(() => finish(undefined));
      this.current = { kind: "pick", title: options.title, quickPick };
      qp.show();
    });
  }

  /** An input box; resolves with the accepted text or undefined (Escape). */
  input(options: {
    title: string;
    prompt: string;
    value?: string;
    placeholder?: string;
    validate?: (value: string) => string | undefined;
  }): Promise<string | undefined> {
    const box = vscode.window.createInputBox();
    box.title = visibleText(options.title);
    box.prompt = inputMessageText(options.prompt);
    if (options.value !== undefined) box.value = options.value;
    if (options.placeholder) box.placeholder = options.placeholder;
    box.ignoreFocusOut = true;
    this.log.push({ kind: "input", title: options.title });
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: string | undefined) => {
        if (done) return;
        done = true;
        if (this.current?.kind === "input" && this.current.inputBox === box) this.current = undefined;
        resolve(value);
        box.dispose();
      };
      const validate = (v: string): string | undefined => {
        const problem = options.validate?.(v);
        return problem === undefined ? undefined : inputMessageText(problem);
      };
      box.onDidChangeValue((v) => {
        box.validationMessage = validate(v);
      });
      box.onDidAccept(() => {
        const problem = validate(box.value);
        if (problem) {
          box.validationMessage = problem;
          return;
        }
        finish(box.value);
      });
      box.onDidHide(() => finish(undefined));
      this.current = { kind: "input", title: options.title, inputBox: box };
      box.show();
    });
  }
}
