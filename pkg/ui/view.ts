// What the ui server reads: the fleet as the page shows it. The hub-backed implementation is
// hub-view.ts; tests and the benchmark give their own.

import type { UiChange, UiSnapshot, UiTemplateDetail } from './shared/model.js';

export interface FleetView {
  /** The current state; `seq` is that of the last change it includes. */
  snapshot(): UiSnapshot;
  /** Calls `listener` with each change, in order, until the returned function is called. */
  subscribe(listener: (change: UiChange) => void): () => void;
  /** The template view for a row id; undefined when there is no such template. */
  templateDetail(id: string): Promise<UiTemplateDetail | undefined>;
}
