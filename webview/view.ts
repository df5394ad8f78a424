/**
 * What the panel's sections render from and act through: the host's state, the UI state kept
 * across reloads, and the few actions a section may take (post a command to the host, save the UI
 * state, render again, show a notice). `main.ts` builds one {@link View} per render; the sections
 * (`sections/*.ts`) never touch the VS Code API themselves.
 */

import type { CategoryEntry, CategoryId, PanelState, WebviewMessage } from "../src/shared/protocol";
import type { TrimPreviewModel, TrimRequestItem } from "../src/shared/trim";

/** UI state kept across reloads (`vscode.setState`; the webview is not retained when hidden). */
export interface UiState {
  /** The tracked files filter text. */
  filter: string;
  /** The summary diff pair (entry ids), when the user picked one. */
  diffFrom?: string;
  diffTo?: string;
  /** The summary diff shows unchanged lines too (else one line of context around changes). */
  showUnchanged: boolean;
  /** Open state of the collapsible sections by key (`summaries`, `diff`, `files`); absent = open. */
  openSections: Record<string, boolean>;
  /** The breakdown category whose largest entries are shown. */
  expandedCategory?: CategoryId;
  /** The groups of "System prompt & tools" whose parts are shown (`FixedGroupModel.id`). */
  fixedGroups?: string[];
  /** Expanded summary cards by entry id; empty = only the latest, `["-"]` = none. */
  expandedSummaries: string[];
  /** The problems list shows all problems (else the first few). */
  allProblems?: boolean;
  /** Context surgery: the plan — the items a row action or a suggestion planned, each with its choice (and note). */
  trimSelection: TrimRequestItem[];
}

/** The trim preview the host answered last (for the current selection), or that one is on its way. */
export interface TrimPreviewState {
  requestId: number;
  /** The preview for `requestId` (undefined while it is on its way; null with `error` when none could be made). */
  preview?: TrimPreviewModel | null;
  error?: string;
}

/** The UI state of a first load (before anything was saved): a new object on every call. */
export function defaultUi(): UiState {
  return {
    filter: "",
    showUnchanged: false,
    openSections: { summaries: true, diff: true, files: true, trim: true },
    expandedSummaries: [],
    trimSelection: [],
  };
}

/** A notice's level (as the host's `notice` message). */
export type NoticeLevel = "info" | "warning" | "error";

/** Post a command to the host. */
export type Send = (message: WebviewMessage) => void;

/** One render's inputs and actions (built by `main.ts`). */
export interface View {
  /** The state shown: a session is present (`session`, `gauge`, `breakdown` and `files` are set). */
  readonly state: PanelState;
  /** The UI state: mutate it, then {@link saveUi} or {@link saveAndRender}. */
  readonly ui: UiState;
  /** Every entry of the breakdown categories the host answered `requestCategory` for. */
  readonly categoryFull: ReadonlyMap<CategoryId, CategoryEntry[]>;
  send: Send;
  /** Persist {@link ui} without rendering again (the caller updates the DOM itself). */
  saveUi(): void;
  /** Persist {@link ui} and render the whole panel again (place and focus are kept). */
  saveAndRender(): void;
  /** A short transient notice inside the panel (never a popup). */
  notice(level: NoticeLevel, text: string): void;
  /** The trim preview of the current selection (see {@link TrimPreviewState}). */
  readonly trimPreview: TrimPreviewState | undefined;
  /** Ask the host for the preview of `ui.trimSelection` (or forget it when the selection is empty), then render. */
  requestTrimPreview(): void;
}
