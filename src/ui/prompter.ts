/** Quick picks and input boxes of a surface, recorded in order so integration tests can answer them. */

import * as vscode from "vscode";
import { iconLabelText, inputMessageText, visibleText } from "../shared/untrusted";

/**
 * Descriptions and details through `iconLabelText`, so session text renders no `$(icon)`. Labels keep
 * our own icons: each surface escapes the session text it puts in a label. Every quick pick uses this.
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

/** `apiKey` is the summarizer's password box; the key is never recorded. */
export interface PromptRecord {
  kind: "pick" | "input" | "apiKey";
  title: string;
  items?: string[];
}

export type OpenPrompt =
  | { kind: "pick"; title: string; quickPick: vscode.QuickPick<vscode.QuickPickItem> }
  | { kind: "input"; title: string; inputBox: vscode.InputBox };

export class Prompter {
  readonly log: PromptRecord[] = [];
  current: OpenPrompt | undefined;

  apiKey(origin: string): void {
    this.log.push({ kind: "apiKey", title: vscode.l10n.t("API Key for {0}", origin) });
  }

  /** Resolves with the accepted item or undefined (Escape); `keepOpen` items do not close it. */
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

  /** Resolves with the selection (possibly empty) or undefined (Escape). */
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
