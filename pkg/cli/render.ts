// `flotilla render`: per-cluster final objects from templates, policies and Clusters, offline. Its flags
// and help are in commands.ts.

import { stringify } from 'yaml';
import { formatExplanation, refOf, renderDetailed, type DetailedPlacement } from '../engine/index.js';
import { checkDocuments, formatFieldError, isAdmitted } from './check.js';
import { UsageError, type CommandIO } from './command.js';
import type { RenderFlags } from './commands.js';
import { describeRef, readInputs, SourceIndex } from './inputs.js';

/** Said when the input has no Cluster: where member clusters come from. */
export const NO_CLUSTERS_HINT = `the input has no Cluster objects, so no template can be placed. Give the member clusters as Cluster
  documents in the input (apiVersion: cluster.flotilla.io/v1alpha1, kind: Cluster; see
  examples/quickstart/clusters.yaml), or use 'flotilla apply --kubeconfig FILE', which deploys to each
  kubeconfig context as a member cluster`;

function header(p: DetailedPlacement): string {
  const t = p.template;
  const overrides = p.overrides.map((o) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`).join(', ');
  return `# cluster: ${p.cluster}\n# template: ${describeRef(t)}\n# policy: ${describeRef(p.policy)}\n${overrides ? `# overrides: ${overrides}\n` : ''}`;
}

/** `CLUSTER/KIND/NAMESPACE/NAME`, or `CLUSTER/KIND/NAME` when the object has no namespace (names never hold a `/`). */
export function nameLine(p: { cluster: string; object: unknown }): string {
  const r = refOf(p.object);
  return [p.cluster, r.kind, ...(r.namespace ? [r.namespace] : []), r.name].join('/');
}

export async function run(values: RenderFlags, io: CommandIO): Promise<number> {
  const files = values.filename;
  if (values.output === 'name' && values.explain) throw new UsageError('--explain does not apply to -o name; use -o yaml or -o json');

  const problems: string[] = [];
  const { documents, errors: readErrors } = await readInputs(files, io.stdin);
  problems.push(...readErrors);
  const sources = new SourceIndex(documents);
  const check = checkDocuments(documents);
  const denied = new Set(check.denials.map((d) => d.document));
  for (const d of check.denials) {
    const who = describeRef(refOf(d.document.object));
    for (const e of d.errors) problems.push(`${d.document.source}: ${who}: ${formatFieldError(e)}`);
  }
  for (const w of check.warnings) io.stderr.write(`warning: ${w.document.source}: ${describeRef(refOf(w.document.object))}: ${w.message}\n`);

  const result = renderDetailed({ objects: documents.filter((d) => !denied.has(d)).map((d) => d.object) }, {
    explain: values.explain,
    ...(values.cluster.length > 0 ? { clusters: values.cluster } : {}),
  });
  for (const e of result.errors) {
    const src = sources.sourceOf(e.object);
    problems.push(`${src ? `${src}: ` : ''}${describeRef(e.object)}${e.cluster ? ` on cluster ${e.cluster}` : ''}: ${e.message}`);
  }
  if (values.cluster.length > 0) {
    const known = new Set(documents.map((d) => d.object).filter((o) => refOf(o).kind === 'Cluster').map((o) => refOf(o).name));
    for (const c of values.cluster) if (!known.has(c)) problems.push(`--cluster ${c}: no Cluster named ${JSON.stringify(c)} in the input`);
  }

  if (values.output === 'json') {
    const out = {
      placements: result.placements.map((p) => ({
        cluster: p.cluster,
        template: p.template,
        policy: p.policy,
        overrides: p.overrides,
        object: p.object,
        ...(values.explain ? { explain: p.changes.map((c) => ({ path: c.path, op: c.op, source: c.source })) } : {}),
      })),
      unmatched: result.unmatched,
      errors: problems,
    };
    io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } else if (values.output === 'name') {
    for (const p of result.placements) io.stdout.write(`${nameLine(p)}\n`);
  } else {
    const docs = result.placements.map((p) => `${header(p)}${values.explain ? formatExplanation(p) : ''}${stringify(p.object, { indentSeq: false, lineWidth: 0 })}`);
    if (docs.length > 0) io.stdout.write(`${docs.join('---\n')}`);
  }
  for (const u of result.unmatched) {
    const src = sources.sourceOf(u);
    io.stderr.write(`note: ${src ? `${src}: ` : ''}${describeRef(u)} matches no PropagationPolicy or ClusterPropagationPolicy; not rendered\n`);
  }
  for (const p of problems) io.stderr.write(`error: ${p}\n`);
  const clusters = documents.filter((d) => !denied.has(d) && isAdmitted(d.object) && refOf(d.object).kind === 'Cluster');
  if (clusters.length === 0) io.stderr.write(`note: ${NO_CLUSTERS_HINT}\n`);
  return problems.length > 0 ? 1 : 0;
}
