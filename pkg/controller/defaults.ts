// What the controller does when an option is not given: `flotilla controller`'s flag defaults are the
// same values (pkg/cli/help-facts.test.ts checks them against these), so a library user and a command
// line user get the same controller.

import { DEFAULT_UNHEALTHY_THRESHOLD } from './disruption.js';

/** Where pull agents renew their Leases (--lease-namespace). */
export const DEFAULT_LEASE_NAMESPACE = 'flotilla-cluster-lease';

export const CONTROLLER_DEFAULTS = {
  /** --resync */
  resyncMs: 600_000,
  /** --probe-interval */
  probeIntervalMs: 10_000,
  /** --probe-timeout */
  probeTimeoutMs: 5_000,
  /** --cluster-status-interval */
  clusterStatusIntervalMs: 30_000,
  /** --not-ready-taint-after */
  notReadyTaintAfterMs: 30_000,
  /** --failover-eviction-timeout */
  failoverEvictionTimeoutMs: 300_000,
  /** --unhealthy-cluster-threshold (disruption.ts; Kubernetes' --unhealthy-zone-threshold) */
  unhealthyClusterThreshold: DEFAULT_UNHEALTHY_THRESHOLD,
  /** --graceful-eviction-timeout */
  gracefulEvictionTimeoutMs: 600_000,
  /** --eviction-purge-mode */
  evictionPurgeMode: 'Gracefully',
  /** --lease-namespace */
  leaseNamespace: DEFAULT_LEASE_NAMESPACE,
  /**
   * --member-concurrency: requests in flight to one member, and templates applied to it at once. Each is a
   * TLS connection and a request the controller holds while the member answers: against 16, 4 took a
   * burst of 1,000 templates to 50 members 10% longer, with 15% less RSS and less CPU (README "Operations").
   */
  memberConcurrency: 4,
} as const;
