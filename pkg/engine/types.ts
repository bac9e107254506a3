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
  taints: ReadonlyArray<{ key: string; value: string; effect: string }>;
  object: JsonObject;
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
