// Cluster rules beyond the schema: taints as Kubernetes validates node taints (key a qualified name, value
// a label value, effect one of three, unique by key and effect), and the proxy URL scheme Karmada accepts.

import { clusterNotActedUpon } from './not-acted-upon.js';
import { invalid, required, unsupported, type FieldError } from './errors.js';
import { isValidLabelValue, validateLabelName } from './names.js';
import { arr, child, index, obj, objectsOf, str, type Obj } from './shape.js';

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
const PROXY_SCHEMES = ['http:', 'https:', 'socks5:'];

export interface Findings {
  errors: FieldError[];
  warnings: string[];
}

function validateTaints(taints: readonly unknown[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  for (const [i, taint] of objectsOf(taints)) {
    const at = index(path, i);
    const k = str(taint, 'key');
    if (k !== undefined) errs.push(...validateLabelName(k, child(at, 'key')));
    const value = str(taint, 'value');
    if (value !== undefined) {
      const problems = isValidLabelValue(value);
      if (problems.length > 0) errs.push(invalid(child(at, 'value'), value, problems.join(';')));
    }
    const effect = str(taint, 'effect');
    if (effect === '') errs.push(required(child(at, 'effect'), ''));
    else if (effect !== undefined && !(TAINT_EFFECTS as readonly string[]).includes(effect))
      errs.push(unsupported(child(at, 'effect'), effect, TAINT_EFFECTS));
    const pair = `${effect ?? ''}\u0000${k ?? ''}`;
    if (seen.has(pair))
      errs.push({
        type: 'Duplicate value',
        field: at,
        value: taint,
        detail: 'taints must be unique by key and effect pair',
      });
    seen.add(pair);
  }
  return errs;
}

function validateProxyURL(proxyURL: string, path: string): FieldError[] {
  let scheme: string;
  try {
    scheme = new URL(proxyURL).protocol;
  } catch (err: unknown) {
    return [invalid(path, proxyURL, `could not parse: ${err instanceof Error ? err.message : String(err)}`)];
  }
  if (!PROXY_SCHEMES.includes(scheme)) {
    return [
      invalid(
        path,
        proxyURL,
        `unsupported scheme ${JSON.stringify(scheme.replace(/:$/, ''))}, must be http, https, or socks5`,
      ),
    ];
  }
  return [];
}

/** The rules for a Cluster whose apiVersion, kind and metadata have been checked. */
export function validateCluster(cluster: Obj): Findings {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const spec = obj(cluster, 'spec');
  if (!spec) return { errors, warnings };
  errors.push(...validateTaints(arr(spec, 'taints'), 'spec.taints'));
  const proxyURL = str(spec, 'proxyURL');
  if (proxyURL) errors.push(...validateProxyURL(proxyURL, 'spec.proxyURL'));
  if (str(spec, 'zone')) warnings.push('spec.zone is deprecated and never used for matching: use spec.zones');
  warnings.push(...clusterNotActedUpon(spec));
  return { errors, warnings };
}
