/** Labels like pi's label editor: by the live bridge, else appended by us. Refusals come before questions. */

import { ACTIONS } from "../core/access/route";
import { LiveSessionError } from "../core/access/words";
import { appendLabelChange } from "../core/flows/label";
import type { Services } from "../services";
import { nothingWritten } from "../shared/format";
import * as notify from "../ui/notify";
import { entryWords } from "../viewModel/treeText";
import type { Prompter } from "../ui/prompter";
import type { SessionTreeProvider } from "./provider";
import * as l10n from "@vscode/l10n";

/** What a label command resolves with: the label entry written and its label (null: cleared), or undefined. */
export type LabelOutcome = { entryId: string; label: string | null } | undefined;

/** An empty label removes it; asks for one when `labelArg` is not a string. */
export async function setLabel(
  services: Services,
  provider: SessionTreeProvider,
  prompter: Prompter,
  id: string | undefined,
  labelArg: unknown,
  force = false,
): Promise<LabelOutcome> {
  const file = provider.file;
  if (!id || !file) return undefined;
  let label = typeof labelArg === "string" ? labelArg : undefined;
  if (label === undefined) {
    // refusals first: nothing is asked when the label could not be written
    const route = await services.access.route(file, ACTIONS.label, {
      retry: () => void setLabel(services, provider, prompter, id, labelArg, true),
      force,
    });
    if (route.kind === "refuse") return undefined;
    label = await prompter.input({
      title: l10n.t("Label for {0}", entryWords(provider.model?.record(id))),
      prompt: l10n.t(
        "pi shows labels in /tree; an empty label removes it. Written as a label entry, like pi's label editor.",
      ),
      value: provider.model?.labels.get(id)?.label ?? "",
    });
    if (label === undefined) return undefined;
  }
  return writeLabel(services, file, id, label, force);
}

/** Remove an entry's label (writes a label entry without a label, as pi does). */
export async function clearLabel(
  services: Services,
  provider: SessionTreeProvider,
  id: string | undefined,
): Promise<LabelOutcome> {
  const file = provider.file;
  if (!id || !file) return undefined;
  return writeLabel(services, file, id, undefined, false);
}

/** Write the label change (the live bridge first); failures are logged and shown, never thrown. */
async function writeLabel(
  services: Services,
  file: string,
  id: string,
  label: string | undefined,
  force: boolean,
): Promise<LabelOutcome> {
  const route = await services.access.route(file, ACTIONS.label, {
    force,
    retry: () => void writeLabel(services, file, id, label, true),
  });
  if (route.kind === "refuse") return undefined;
  if (route.kind === "bridge") {
    const live = await services.liveBridge.routeLabel(file, id, label); // the running pi writes it
    if (live) return live.result;
  }
  try {
    const r = await appendLabelChange(
      file,
      id,
      label,
      services.access.flowOptions(route.kind === "file" && route.forced),
    );
    services.log.info(`label ${file}: ${id} → ${r.entry.label ?? "(cleared)"} (entry ${r.entry.id})`);
    await services.sessions.refresh().catch(() => undefined);
    return { entryId: r.entry.id, label: r.entry.label ?? null };
  } catch (error) {
    const message = (error as Error).message;
    services.log.warn(`label ${file}: ${message}`);
    if (error instanceof LiveSessionError) services.access.showRefusal(error, file);
    else void notify.error(l10n.t("could not write the label: {0}", nothingWritten(message)));
    return undefined;
  }
}
