/** The panel's drill-down of the system message by part. Browser-safe; tokens: pi's chars/4 estimate. */

export interface FixedItemModel {
  kind: string;
  kindLabel: string;
  name: string;
  fullName: string;
  tokens: number;
  use: string;
  removal: string;
  unused?: boolean;
}

export interface FixedGroupModel {
  id: string;
  label: string;
  tokens: number;
  items: FixedItemModel[];
}

export interface FixedContextModel {
  total: number;
  /** `sections` (pi ≥ 0.87), `content` (one prompt part), `none` (no system message in the file). */
  layout: "sections" | "content" | "none";
  groups: FixedGroupModel[];
  notes: string[];
  session?: string;
}
