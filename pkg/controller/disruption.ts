// The disruption rule of Kubernetes' node lifecycle controller, for clusters: when most clusters turn
// unhealthy at once, the likelier cause is on the control plane's side (its network, the hub, a shared
// dependency), and evicting would move every workload for nothing or onto the few clusters left. So no
// cluster gets a NoExecute health taint while
//   - no judged cluster is ready (full disruption), or
//   - more than two are not ready and they are at least `threshold` of the judged ones (partial
//     disruption; kube's --unhealthy-zone-threshold, default 0.55, with its minimum of three), or
//   - two or more push members exist and none answers: this process's own network is the likelier
//     fault (the same for pull clusters: two or more and none renews its Lease through the hub).
// Judged: the clusters whose readiness this process knows; a pull cluster whose agent never joined is
// not counted. Pure.

export const DEFAULT_UNHEALTHY_THRESHOLD = 0.55;

export interface JudgedCluster {
  ready: boolean;
  pull: boolean;
}

export interface Disruption {
  mode: 'normal' | 'full' | 'partial' | 'push-unreachable' | 'pull-unreachable';
  ready: number;
  notReady: number;
}

export function disruption(clusters: Iterable<JudgedCluster>, threshold = DEFAULT_UNHEALTHY_THRESHOLD): Disruption {
  let ready = 0;
  let notReady = 0;
  const by = { push: { ready: 0, all: 0 }, pull: { ready: 0, all: 0 } };
  for (const c of clusters) {
    const g = c.pull ? by.pull : by.push;
    g.all++;
    if (c.ready) {
      ready++;
      g.ready++;
    } else notReady++;
  }
  const counts = { ready, notReady };
  if (notReady === 0) return { mode: 'normal', ...counts };
  if (ready === 0) return { mode: 'full', ...counts };
  if (notReady > 2 && notReady / (ready + notReady) >= threshold) return { mode: 'partial', ...counts };
  if (by.push.all >= 2 && by.push.ready === 0) return { mode: 'push-unreachable', ...counts };
  if (by.pull.all >= 2 && by.pull.ready === 0) return { mode: 'pull-unreachable', ...counts };
  return { mode: 'normal', ...counts };
}

/** What the log says of a mode. */
export function disruptionText(d: Disruption): string {
  const n = `${d.notReady} of ${d.ready + d.notReady} clusters not ready`;
  switch (d.mode) {
    case 'normal':
      return n;
    case 'full':
      return `${n}: none is ready (full disruption); no cluster is tainted NoExecute until one is`;
    case 'partial':
      return `${n} (partial disruption, at or above --unhealthy-cluster-threshold); no cluster is tainted NoExecute until fewer are`;
    case 'push-unreachable':
      return `${n}: no push member answers this process; no cluster is tainted NoExecute until one does`;
    case 'pull-unreachable':
      return `${n}: no pull cluster's agent renews its Lease; no cluster is tainted NoExecute until one does`;
  }
}
