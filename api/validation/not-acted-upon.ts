// Karmada fields Flotilla accepts (so a Karmada policy or Cluster file is taken unchanged) but does not act
// upon yet. Each one present gets a warning naming the field and what Flotilla does instead: at admission,
// in `flotilla validate` and in `flotilla render`, never in silence. docs/karmada-fields.md keeps the table
// of every Karmada field; a field that starts being acted upon leaves this list and changes its row there.

import { arr, bool, obj, objectsOf, str, type Obj } from './shape.js';

const NOT_ACTED = 'is accepted but not acted upon';

/** Warnings for the fields of a PropagationPolicy/ClusterPropagationPolicy spec that Flotilla does not act upon. */
export function propagationNotActedUpon(spec: Obj): string[] {
  const out: string[] = [];
  if (bool(spec, 'association') === true)
    out.push(
      `spec.association ${NOT_ACTED}: it is the deprecated name of propagateDeps, which Karmada no longer reads either; set spec.propagateDeps: true`,
    );
  if (obj(spec, 'schedulePriority'))
    out.push(`spec.schedulePriority ${NOT_ACTED}: templates are scheduled in the order they change`);
  if (str(spec, 'activationPreference') === 'Lazy')
    out.push(`spec.activationPreference ${NOT_ACTED}: policy changes reach the templates it claims at once`);
  if ((arr(spec, 'dependentOverrides')?.length ?? 0) > 0)
    out.push(
      `spec.dependentOverrides ${NOT_ACTED}: the policy applies without waiting for the OverridePolicies it names`,
    );
  const placement = obj(spec, 'placement');
  if (obj(placement, 'workloadAffinity'))
    out.push(`spec.placement.workloadAffinity ${NOT_ACTED}: templates are placed one by one, not grouped by label`);
  for (const [i, term] of objectsOf(arr(placement, 'clusterAffinities'))) {
    if ((arr(term, 'overflowAffinities')?.length ?? 0) > 0)
      out.push(
        `spec.placement.clusterAffinities[${i}].overflowAffinities ${NOT_ACTED}: replicas are not spilled over to them`,
      );
  }
  return out;
}

/** Warnings for the fields of a Cluster spec that Flotilla does not act upon. */
export function clusterNotActedUpon(spec: Obj): string[] {
  const out: string[] = [];
  if (str(spec, 'proxyURL'))
    out.push(
      `spec.proxyURL ${NOT_ACTED}: the member is reached as its secretRef's kubeconfig says (a kubeconfig proxy-url is honoured)`,
    );
  if (obj(spec, 'proxyHeader')) out.push(`spec.proxyHeader ${NOT_ACTED}: no header is added to requests to the member`);
  if (obj(spec, 'impersonatorSecretRef'))
    out.push(`spec.impersonatorSecretRef ${NOT_ACTED}: requests to the member use the secretRef's credentials`);
  return out;
}
