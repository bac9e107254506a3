// cluster.flotilla.io/v1alpha1 Cluster: the fields of Karmada's cluster.karmada.io/v1alpha1 Cluster that
// bear on targeting and on reaching the member. Cluster-scoped.

import type { ObjectMeta } from '../../policy/v1alpha1/types.js';

export const GROUP = 'cluster.flotilla.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KARMADA_API_VERSION = 'cluster.karmada.io/v1alpha1';
export const KIND = 'Cluster';

export interface Taint {
  key: string;
  value?: string;
  effect: string; // one of 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute'
  timeAdded?: string;
}

export interface LocalSecretReference {
  namespace: string;
  name: string;
}

export interface ClusterSpec {
  id?: string;
  syncMode?: string; // one of 'Push' | 'Pull'
  apiEndpoint?: string;
  secretRef?: LocalSecretReference;
  impersonatorSecretRef?: LocalSecretReference;
  insecureSkipTLSVerification?: boolean;
  proxyURL?: string;
  proxyHeader?: Record<string, string>;
  provider?: string;
  region?: string;
  /** Deprecated and never used for matching; use `zones`. */
  zone?: string;
  zones?: string[];
  taints?: Taint[];
}

export interface Cluster {
  apiVersion: string;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec?: ClusterSpec;
  status?: Record<string, unknown>;
}
