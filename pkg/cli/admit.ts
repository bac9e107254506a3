// `flotilla admit`: objects as the admission override route admits them in one cluster, offline.

import {
  AdmissionOverrideError,
  clusterInfo,
  isMutator,
  OverrideSet,
  refOf,
  type AdmitResult,
} from '../engine/index.js';
import { writeYaml } from '../yaml/index.js';
import { checkInputs, readOrInterrupted } from './check.js';
import type { CommandIO } from './command.js';
import type { AdmitFlags } from './commands.js';
import { describeRef, type InputOptions } from './inputs.js';

const POLICY_GROUPS = new Set(['policy.flotilla.io', 'policy.karmada.io']);
const CLUSTER_GROUPS = new Set(['cluster.flotilla.io', 'cluster.karmada.io']);

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export async function run(values: AdmitFlags, io: CommandIO): Promise<number> {
  const input: InputOptions = { filenames: values.filename, recursive: values.recursive, generateName: true };
  const read = await readOrInterrupted('admit', input, io);
  if (typeof read === 'number') return read;
  const { documents, denied, problems, notes } = checkInputs(read);
  for (const n of notes) io.stderr.write(`${n}\n`);

  const name = values.cluster;
  const clusterDoc = documents.find((d) => {
    const r = refOf(d.object);
    return CLUSTER_GROUPS.has(groupOf(r.apiVersion)) && r.kind === 'Cluster' && r.name === name;
  });
  if (!clusterDoc)
    io.stderr.write(
      `note: no Cluster named ${JSON.stringify(name)} in the input: rules see the name only (no labels, provider, region or zones)\n`,
    );
  const set = new OverrideSet(
    clusterInfo(
      (clusterDoc?.object as Record<string, unknown> | undefined) ?? {
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name },
      },
    ),
  );

  const namespaceLabels = new Map<string, Record<string, string>>();
  const targets: typeof documents = [];
  for (const d of documents) {
    const r = refOf(d.object);
    const group = groupOf(r.apiVersion);
    if (POLICY_GROUPS.has(group) || isMutator(d.object)) {
      if (denied.has(d)) continue;
      if (r.kind === 'OverridePolicy' || r.kind === 'ClusterOverridePolicy' || isMutator(d.object)) {
        const problem = set.upsert(d.object);
        if (problem !== undefined) problems.push(`${d.source}: ${describeRef(r)}: ${problem}`);
      }
      continue;
    }
    if (CLUSTER_GROUPS.has(group)) continue;
    if (r.apiVersion === 'v1' && r.kind === 'Namespace') {
      const labels = (d.object as { metadata?: { labels?: unknown } }).metadata?.labels;
      if (labels && typeof labels === 'object')
        namespaceLabels.set(
          r.name,
          Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string')),
        );
    }
    targets.push(d);
  }

  const admitted: Array<{ source: string; result: AdmitResult }> = [];
  for (const d of targets) {
    const r = refOf(d.object);
    try {
      const result = set.admit({
        object: d.object,
        operation: values.operation,
        namespaceLabels: namespaceLabels.get(r.namespace ?? 'default'),
        explain: values.output === 'json',
      });
      admitted.push({ source: d.source, result });
      for (const w of result.warnings) io.stderr.write(`warning: ${d.source}: ${describeRef(r)}: ${w}\n`);
    } catch (err: unknown) {
      if (!(err instanceof AdmissionOverrideError)) throw err;
      problems.push(`${d.source}: ${describeRef(r)} in cluster ${name}: ${err.message}`);
    }
  }

  if (values.output === 'json') {
    const out = {
      cluster: name,
      operation: values.operation,
      objects: admitted.map(({ result }) => ({
        object: result.object,
        changed: result.changed,
        rules: result.rules,
        mutators: result.mutators,
        warnings: result.warnings,
        changes: result.changes.map((c) => ({ path: c.path, op: c.op, source: c.source })),
      })),
      errors: problems,
    };
    io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } else if (admitted.length > 0) {
    io.stdout.write(admitted.map(({ result }) => writeYaml(result.object)).join('---\n'));
  }
  for (const p of problems) io.stderr.write(`error: ${p}\n`);
  return problems.length > 0 ? 1 : 0;
}
