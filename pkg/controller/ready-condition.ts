// What a Cluster's Ready condition says (pure): for a pull cluster, its agent's Lease (AgentLeaseRenewed,
// AgentLeaseExpired, AgentNotJoined); for a push member, its /readyz probe (MemberReady, MemberNotReady);
// for a cluster with no member, why there is none; nothing before the first verdict.

import type { Readiness } from './member-probe.js';
import type { Condition } from './status.js';

export function readyCondition(c: {
  /** A pull cluster's readiness from its agent's Lease, and the reason when not ready. */
  pull?: { readiness: Readiness; reason: string | undefined } | undefined;
  /** A push member: its apiserver and probe. */
  member?: { server: string; readiness: Readiness } | undefined;
  /** Why the cluster has no member, when known. */
  noAccess?: { reason: string; why: string } | undefined;
}): Condition | undefined {
  const pull = c.pull?.readiness;
  if (pull)
    return pull.ready === undefined
      ? undefined
      : pull.ready
        ? { status: 'True', reason: 'AgentLeaseRenewed', message: pull.message ?? 'its agent renews its Lease' }
        : {
            status: 'False',
            reason: c.pull?.reason ?? 'AgentLeaseExpired',
            message: pull.message ?? 'its agent does not renew its Lease',
          };
  const m = c.member;
  if (!m) return c.noAccess ? { status: 'False', reason: c.noAccess.reason, message: c.noAccess.why } : undefined;
  const r = m.readiness;
  if (r.ready === undefined) return undefined;
  return r.ready
    ? { status: 'True', reason: 'MemberReady', message: `${m.server}/readyz answered ok` }
    : { status: 'False', reason: 'MemberNotReady', message: r.message ?? 'not ready' };
}
