// Engine-internal types. The public result shape (RenderResult) is in pkg/engine/render.ts and matches
// the library contract (README "Library", docs/architecture.md) exactly; what is here carries more (rules, changed paths) for --explain.

import type { ClusterFacts } from '../../api/variables/index.js';
import type { JsonObject } from './json.js';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface PolicyRef {
  kind: string;
  namespace?: string;
  name: string;
}

/** A Cluster object, read once into what matching, tolerations and variables need. */
export interface ClusterInfo extends ClusterFacts {
  name: string;
  labels: Readonly<Record<string, string>>;
  /** provider/region as the field selector sees them (absent when empty). */
  fields: Readonly<Record<string, string>>;
  zones: readonly string[];
  /** `timeAdded` in ms since the epoch, when the taint says (NoExecute tolerationSeconds count from it). */
  taints: ReadonlyArray<{ key: string; value: string; effect: string; timeAdded?: number }>;
  /** status.resourceSummary, in milli-units per resource; absent when the status has none. */
  capacity?: Capacity | undefined;
  /** status.apiEnablements as sorted `groupVersion/Kind`; absent when the status lists none. */
  apis?: readonly string[] | undefined;
  object: JsonObject;
}

/** A cluster's resource summary in milli-units per resource (capacity.ts reads and uses it). */
export interface Capacity {
  allocatable: Readonly<Record<string, number>>;
  allocated: Readonly<Record<string, number>>;
  allocating: Readonly<Record<string, number>>;
}

/** Where a change came from: a propagation policy (replica division) or an override rule's overrider. */
export interface ChangeSource {
  policy: PolicyRef;
  /** Index in spec.overrideRules; -1 for the deprecated top-level targetCluster/overriders. */
  rule?: number;
  /** e.g. `imageOverrider[0]`, `plaintext[2]`, `replicaScheduling`. */
  overrider: string;
}

export interface Change {
  /** Concrete JSON pointer written (keyed segments resolved to indices). */
  path: string;
  op: 'add' | 'replace' | 'remove';
  source: ChangeSource;
}

export interface AppliedRule {
  policy: PolicyRef;
  rule: number;
}
