/**
 * Reveals only once the view is visible and VS Code fetched what it asked for (else "Data tree node
 * not found"); one at a time, retried twice. The view follows the leaf until the user selects another.
 */

import * as vscode from "vscode";
import type { TreeElement } from "../core/treeModel/elements";
import type { Services } from "../services";
import { QUIET_MS, SESSION_TREE_VIEW, type SessionTreeProvider } from "./provider";

/** At most this long is waited for the view to settle before a reveal is tried anyway (ms). */
const SETTLE_TIMEOUT_MS = 4000;

/** Options of {@link TreeRevealer.reveal}. */
export interface RevealOptions {
  select?: boolean;
  focus?: boolean;
  /** Open the view first when it is hidden (default: reveal only into a visible view). */
  show?: boolean;
}

/** Reveals done, retried after VS Code had not caught up (logged at debug level), and failed (logged as warnings). */
export interface RevealStats {
  done: number;
  retried: number;
  failed: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Reveals entries of one tree view, queued, once the view has settled. */
export class TreeRevealer {
  readonly stats: RevealStats = { done: 0, retried: 0, failed: 0 };
  /** The leaf moved (or a new session came) and has not been revealed since. */
  private pending = true;
  /** The view shows the leaf and follows it (false once the user selected another entry). */
  private followingLeaf = true;
  private visibleSince: number;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly treeView: vscode.TreeView<TreeElement>,
    private readonly provider: SessionTreeProvider,
    private readonly log: Services["log"],
  ) {
    this.visibleSince = treeView.visible ? Date.now() : 0;
  }

  /** Reveal an entry (or its nearest visible ancestor); reveals run one at a time, each against the model as it is when its turn comes. */
  reveal(entryId: string, options: RevealOptions = {}): Promise<TreeElement | undefined> {
    // an entry asked for by the user (opening the view for it) wins over a pending leaf reveal,
    // which the view's first showing would otherwise queue right after it and scroll back
    if (options.show) this.pending = false;
    const next = this.queue.then(() => this.revealNow(entryId, options));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The leaf when the reveal's turn comes, not when asked (entries may arrive in between). */
  async revealLeaf(options: RevealOptions = {}): Promise<TreeElement | undefined> {
    if (!this.provider.model?.displayLeafId) return undefined;
    this.followingLeaf = true;
    const next = this.queue.then(async () => {
      const leaf = this.provider.model?.displayLeafId;
      return leaf ? this.revealNow(leaf, options) : undefined;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The leaf moved: reveal it now or when the view is next shown ({@link revealPendingLeaf}). */
  leafMoved(): void {
    this.pending = true;
  }

  /** The file's leaf changed (entries appended): follow it when the view is following the leaf. */
  leafChanged(): void {
    if (this.followingLeaf) this.pending = true;
  }

  /** The user selected entries: the view stops following the leaf unless the leaf is among them. */
  selectionChanged(selected: readonly TreeElement[]): void {
    if (selected.length === 0) return;
    const leaf = this.provider.model?.displayLeafId;
    const leafElement = leaf ? this.provider.model?.elementOf(leaf) : undefined;
    this.followingLeaf = leafElement !== undefined && selected.includes(leafElement);
  }

  /** Reveal the leaf without selecting it when it moved since the last reveal and the view shows a session; a failed reveal stays pending. */
  revealPendingLeaf(): void {
    if (this.pending && this.treeView.visible && this.provider.model) {
      this.pending = false;
      void this.revealLeaf({ select: false }).then((shown) => {
        if (!shown && !this.treeView.visible) this.pending = true; // hidden meanwhile: when shown again
      });
    }
  }

  /** Reveal the leaf now when the view is visible and shows a session (no reveal is pending then); else it stays pending. */
  async revealLeafIfVisible(options: RevealOptions): Promise<void> {
    if (this.provider.model && this.treeView.visible) {
      this.pending = false;
      await this.revealLeaf(options);
    }
  }

  /** The view was shown or hidden (`onDidChangeVisibility`). */
  visibilityChanged(visible: boolean): void {
    if (visible) this.visibleSince = Date.now();
    if (visible) this.revealPendingLeaf();
  }

  /** Wait until the view is visible and VS Code has fetched what it asked for since the last refresh. */
  private async settle(): Promise<boolean> {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    for (;;) {
      if (this.treeView.visible && this.provider.settled && Date.now() - this.visibleSince >= QUIET_MS) return true;
      if (Date.now() > deadline) return this.treeView.visible;
      await sleep(40);
    }
  }

  private async revealNow(entryId: string, options: RevealOptions): Promise<TreeElement | undefined> {
    if (!this.treeView.visible) {
      if (!options.show) return undefined;
      await vscode.commands.executeCommand(`${SESSION_TREE_VIEW}.focus`);
    }
    for (let attempt = 1; ; attempt++) {
      if (!(await this.settle())) return undefined;
      const element = this.provider.model?.elementOf(entryId);
      if (!element) return undefined;
      try {
        await this.treeView.reveal(element, {
          select: options.select ?? true,
          focus: options.focus ?? false,
          expand: false,
        });
        this.stats.done++;
        return element;
      } catch (error) {
        const message = (error as Error).message;
        if (attempt < 3) {
          // VS Code was still applying a refresh: wait until it is done and try again
          this.stats.retried++;
          this.log.debug(`tree view: reveal ${entryId} (attempt ${attempt}): ${message}`);
          await sleep(200 * attempt);
          continue;
        }
        this.stats.failed++;
        this.log.warn(`tree view: could not reveal ${entryId}: ${message}`);
        return undefined;
      }
    }
  }
}
