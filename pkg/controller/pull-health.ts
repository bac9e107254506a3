// A pull cluster's health from its agent's Lease on the hub (--lease-namespace/<cluster>), as the Lease
// reads at one time: ready while it has a holder and renewTime + leaseDurationSeconds is in the future.
// Pure: the verdict and the sentence the Cluster's Ready condition and the log carry. The controller
// takes the verdict at first sight only; after that it judges from the renewals it observes
// (agent-leases.ts).

import { isObject, ownString, type JsonObject } from '../kube/objects.js';

export interface AgentLeaseVerdict {
  ready: boolean;
  /** What the condition and the log say, naming the agent and the Lease. */
  message: string;
  /** While ready: when the Lease lapses unless renewed (ms since the epoch), to look again then. */
  expiresAt?: number;
}

/** How cluster `name`'s agent is doing, from its Lease `lease` in `namespace` (undefined: there is none). */
export function agentLeaseVerdict(
  lease: JsonObject | undefined,
  namespace: string,
  name: string,
  now: number,
): AgentLeaseVerdict {
  const ref = `Lease ${namespace}/${name}`;
  if (!lease) return { ready: false, message: `no agent holds ${ref} on the hub: it does not exist` };
  const spec = isObject(lease.spec) ? lease.spec : {};
  const holder = ownString(spec, 'holderIdentity');
  if (!holder) return { ready: false, message: `no agent holds ${ref} on the hub: it has no holderIdentity` };
  const renewTime = ownString(spec, 'renewTime');
  const renewed = Date.parse(renewTime ?? '');
  const seconds = Object.hasOwn(spec, 'leaseDurationSeconds') ? spec.leaseDurationSeconds : undefined;
  if (renewTime === undefined) return { ready: false, message: `its agent ${holder} has never renewed ${ref}` };
  if (!Number.isFinite(renewed))
    return {
      ready: false,
      message: `its agent ${holder} holds ${ref}, whose renewTime ${JSON.stringify(renewTime)} is not a time`,
    };
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0)
    return {
      ready: false,
      message: `its agent ${holder} holds ${ref}, which has no leaseDurationSeconds: it cannot say how long the agent is alive`,
    };
  const expiresAt = renewed + seconds * 1000;
  if (expiresAt <= now)
    return {
      ready: false,
      message: `its agent ${holder} has not renewed ${ref} since ${renewTime} (leaseDurationSeconds ${seconds})`,
    };
  // Not the renewTime: the message stays the same from one renewal to the next (no status write each time).
  return { ready: true, message: `its agent ${holder} renews ${ref}`, expiresAt };
}
