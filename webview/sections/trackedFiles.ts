/**
 * The tracked files section: the modified and read files as pi's next compaction would list them,
 * with a filter. Each list is a listbox: ↑/↓/Home/End move, Space/click = preview, Enter/double-click
 * = keep open, Ctrl/Cmd+Enter or Ctrl/Cmd+click = to the side, Ctrl/Cmd+C = copy path; row buttons
 * diff against git HEAD and copy the path. Only absolute paths the host sent are posted back.
 */

import type { TrackedFileModel } from "../../src/shared/protocol";
import { append, h, icon } from "../dom";
import { basename } from "../format";
import type { View } from "../view";
import { collapsible } from "../widgets";
import * as l10n from "@vscode/l10n";

/** The path relative to the session cwd when inside it, else as pi lists it. */
function relativePath(f: TrackedFileModel, cwd: string | null): string {
  if (cwd && (f.absolutePath === cwd || f.absolutePath.startsWith(cwd.endsWith("/") ? cwd : `${cwd}/`)))
    return f.absolutePath.slice(cwd.length).replace(/^[\\/]/, "");
  return f.path;
}

/**
 * Where the file came from, one line per source: `compaction 2 (id): modified`, `turn 7 (id): edit`;
 * when the host sent only the last few, a first line says how many earlier ones there are.
 */
function sourceText(f: TrackedFileModel): string {
  const earlier = f.sourceCount - f.sources.length;
  return [
    ...(earlier > 0 ? [l10n.t("… {0} earlier", earlier)] : []),
    ...f.sources.map((src) =>
      src.kind === "compaction"
        ? l10n.t("compaction {0} ({1}): {2}", src.ordinal, src.entryId, src.op)
        : l10n.t("turn {0} ({1}): {2}", src.ordinal, src.entryId, src.op),
    ),
  ].join("\n");
}

/** The tracked files section of a shown session (`view.state.files` set). */
export function renderFilesSection(view: View): HTMLElement {
  const files = view.state.files!;
  const total = files.readFiles.length + files.modifiedFiles.length;
  const filter = h("vscode-textfield", {
    placeholder: l10n.t("Filter files"),
    value: view.ui.filter,
    "data-testid": "file-filter",
    "data-key": "file-filter",
    "aria-label": l10n.t("Filter tracked files"),
  });
  filter.appendChild(icon("filter", { slot: "content-before", size: "14" }));
  const listsBox = h("div", { class: "file-lists" });
  const renderLists = () => {
    listsBox.replaceChildren(
      renderFileList(view, l10n.t("Modified"), "modified", files.modifiedFiles),
      renderFileList(view, l10n.t("Read"), "read", files.readFiles),
    );
  };
  // typing re-renders only the lists (the text field keeps its focus and caret)
  filter.addEventListener("input", () => {
    view.ui.filter = (filter as unknown as { value: string }).value;
    view.saveUi();
    renderLists();
  });
  renderLists();
  const seeded = files.seededFrom
    ? h(
        "p",
        { class: "note muted" },
        l10n.t(
          "As pi's next compaction would list them: compaction {0}'s details plus tool calls since. Paths resolved against {1}.",
          files.seededFrom,
          files.cwd ?? l10n.t("the session cwd"),
        ),
      )
    : h(
        "p",
        { class: "note muted" },
        l10n.t(
          "As pi's next compaction would list them (tool calls in the current context). Paths resolved against {0}.",
          files.cwd ?? l10n.t("the session cwd"),
        ),
      );
  return collapsible(
    view,
    "files",
    l10n.t("Tracked files"),
    l10n.t("{0} modified · {1} read", files.modifiedFiles.length, files.readFiles.length),
    total
      ? [h("div", { class: "filter-row" }, filter), listsBox, seeded]
      : [h("p", { class: "muted pad" }, l10n.t("No file was read, written or edited in the current context."))],
  );
}

/** One list (heading with the count, `n of m` while filtered) as a listbox. */
function renderFileList(view: View, title: string, kind: "modified" | "read", files: TrackedFileModel[]): HTMLElement {
  const q = view.ui.filter.trim().toLowerCase();
  const shown = q
    ? files.filter((f) => f.path.toLowerCase().includes(q) || f.absolutePath.toLowerCase().includes(q))
    : files;
  const wrap = h("div", { class: "file-group" });
  wrap.appendChild(
    h(
      "h3",
      null,
      icon(kind === "modified" ? "edit" : "eye", { size: "14" }),
      ` ${title} `,
      h("span", { class: "muted" }, q ? l10n.t("{0} of {1}", shown.length, files.length) : String(files.length)),
    ),
  );
  if (shown.length === 0) {
    wrap.appendChild(h("p", { class: "muted pad" }, files.length ? l10n.t("No match.") : l10n.t("None.")));
    return wrap;
  }
  const list = h("div", {
    class: "files",
    role: "listbox",
    "aria-label": l10n.t("{0} files", title),
    "data-testid": `files-${kind}`,
  });
  shown.forEach((f, i) => list.appendChild(renderFileRow(view, f, i === 0)));
  list.addEventListener("keydown", (ev) => onListKey(ev as KeyboardEvent, list));
  wrap.appendChild(list);
  return wrap;
}

/** A row button (`<vscode-toolbar-button>`) that posts a command without selecting the row. */
function rowButton(iconName: string, label: string, title: string, action: string, onClick: () => void): HTMLElement {
  const b = h("vscode-toolbar-button", { icon: iconName, label, title, "data-action": action });
  b.addEventListener("click", (ev) => {
    ev.stopPropagation();
    onClick();
  });
  return b;
}

/** One file row (an `option`; the first of a list is the tab stop). */
function renderFileRow(view: View, f: TrackedFileModel, first: boolean): HTMLElement {
  const { send } = view;
  const rel = relativePath(f, view.state.files?.cwd ?? null);
  const dir = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
  const missing = f.exists === false;
  const row = h("div", {
    class: `file ${missing ? "missing" : ""} ${f.openInTab ? "open" : ""} ${f.outsideWorkspace ? "outside" : ""}`,
    role: "option",
    tabindex: first ? "0" : "-1",
    "aria-selected": "false",
    "data-path": f.absolutePath,
    "data-key": `file-${f.list}-${f.absolutePath}`,
    title: l10n.t(
      "{0}{1}{2}\n\n{3}\n\nClick: preview · Double-click/Enter: keep open · Ctrl+Enter: to the side · Ctrl+C: copy path",
      f.absolutePath,
      missing ? l10n.t("\n(missing on disk)") : "",
      f.outsideWorkspace ? l10n.t("\n(outside the workspace)") : "",
      sourceText(f),
    ),
  });
  const last = f.sources[f.sources.length - 1];
  const origin = last ? (last.kind === "compaction" ? `compaction ${last.ordinal}` : `turn ${last.ordinal}`) : "";
  append(row, [
    icon(missing ? "circle-slash" : f.list === "modified" ? "diff-modified" : "file", {
      size: "14",
      class: "file-icon",
    }),
    h("span", { class: "file-name" }, basename(rel)),
    h("span", { class: "file-dir muted" }, dir),
    h(
      "span",
      { class: "file-flags" },
      missing ? h("span", { class: "flag flag-missing", "data-flag": "missing" }, l10n.t("missing")) : null,
      f.outsideWorkspace
        ? h(
            "span",
            { class: "flag flag-outside", "data-flag": "outside", title: l10n.t("Outside the workspace folders") },
            "outside",
          )
        : null,
      f.openInTab
        ? h(
            "span",
            { class: "flag flag-open", "data-flag": "open", title: l10n.t("Open in an editor tab") },
            icon("circle-filled", { size: "8" }),
          )
        : null,
      h("span", { class: "file-origin muted", title: sourceText(f) }, origin),
    ),
  ]);
  const actions = h("span", { class: "file-actions" });
  if (f.list === "modified" && f.inGitRepo && !missing && view.state.capabilities.git)
    actions.appendChild(
      rowButton("git-compare", l10n.t("Diff against HEAD"), l10n.t("Open diff against git HEAD"), "git-diff", () =>
        send({ type: "openGitDiff", path: f.absolutePath }),
      ),
    );
  actions.appendChild(
    rowButton("copy", l10n.t("Copy path"), l10n.t("Copy path"), "copy-path", () =>
      send({ type: "copyPath", path: f.absolutePath }),
    ),
  );
  row.appendChild(actions);
  // a missing file too: the host says so where it stays visible and offers the folder and the path
  const open = (preview: boolean, toSide = false) =>
    send({ type: "openFile", path: f.absolutePath, preview, ...(toSide ? { toSide } : {}) });
  row.addEventListener("click", (ev) => {
    select(row);
    if ((ev as MouseEvent).detail <= 1) open(true, (ev as MouseEvent).ctrlKey || (ev as MouseEvent).metaKey);
  });
  row.addEventListener("dblclick", () => open(false));
  row.addEventListener("keydown", (ev) => {
    const k = ev as KeyboardEvent;
    if (k.key === "Enter") {
      k.preventDefault();
      open(false, k.ctrlKey || k.metaKey);
    } else if (k.key === " ") {
      k.preventDefault();
      open(true);
    } else if ((k.key === "c" || k.key === "C") && (k.ctrlKey || k.metaKey)) {
      k.preventDefault();
      send({ type: "copyPath", path: f.absolutePath });
    }
  });
  return row;
}

/** Make `row` the selected option and the list's tab stop. */
function select(row: HTMLElement): void {
  const list = row.parentElement;
  list?.querySelectorAll('[role="option"]').forEach((el) => {
    el.setAttribute("tabindex", "-1");
    el.setAttribute("aria-selected", "false");
  });
  row.setAttribute("tabindex", "0");
  row.setAttribute("aria-selected", "true");
}

/** ↑/↓/Home/End in a file list: select and focus the next row. */
function onListKey(ev: KeyboardEvent, list: HTMLElement): void {
  const rows = [...list.querySelectorAll<HTMLElement>('[role="option"]')];
  const i = rows.indexOf(document.activeElement as HTMLElement);
  let next = -1;
  if (ev.key === "ArrowDown") next = Math.min(rows.length - 1, i + 1);
  else if (ev.key === "ArrowUp") next = Math.max(0, i - 1);
  else if (ev.key === "Home") next = 0;
  else if (ev.key === "End") next = rows.length - 1;
  if (next < 0) return;
  ev.preventDefault();
  const row = rows[next]!;
  select(row);
  row.focus();
}
