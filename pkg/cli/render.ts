// `flotilla render`: per-cluster final objects from templates, policies and Clusters, offline.

import { describePolicy, explainPlacement, refOf, renderEach, type DetailedPlacement } from '../engine/index.js';
import { writeYaml } from '../yaml/index.js';
import { checkInputs, isAdmitted, nothingIn, readOrInterrupted } from './check.js';
import { UsageError, type CommandIO } from './command.js';
import type { RenderFlags } from './commands.js';
import { describeRef, SourceIndex, type InputOptions } from './inputs.js';

/** Said when the input has no Cluster: where member clusters come from. */
export const NO_CLUSTERS_HINT = `the input has no Cluster objects, so no template can be placed. Give the member clusters as Cluster
  documents in the input (apiVersion: cluster.flotilla.io/v1alpha1, kind: Cluster; see
  examples/quickstart/clusters.yaml), or use 'flotilla apply --kubeconfig FILE', which deploys to each
  kubeconfig context as a member cluster`;

/**
 * Text for a YAML comment: input strings (names, paths) may hold line breaks or control characters that
 * would end the comment and inject YAML into the output, so such text is written JSON-quoted.
 */
function commentText(s: string): string {
  // eslint-disable-next-line no-control-regex
  const unsafe = /[\x00-\x1F\x7F-\x9F\u2028\u2029\uFFFE\uFFFF]/g;
  return unsafe.test(s)
    ? JSON.stringify(s).replace(unsafe, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`)
    : s;
}

function header(p: DetailedPlacement): string {
  const fields: Array<[string, string]> = [
    ['cluster', p.cluster],
    ['template', describeRef(p.template)],
    ['policy', describeRef(p.policy)],
    ...(p.overrides.length > 0 ? [['overrides', p.overrides.map(describeRef).join(', ')] as [string, string]] : []),
  ];
  return fields.map(([k, v]) => `# ${k}: ${commentText(v)}\n`).join('');
}

/**
 * `--explain` as YAML comments: which policy and rule set each changed path, last writer first. The
 * wording is pkg/engine's (formatExplanation); only the text from the input is made comment-safe.
 */
function explanation(p: DetailedPlacement, notChosen: ReadonlyArray<{ cluster: string; reason: string }>): string {
  const head = [
    `# ${commentText(`${describePolicy(p.template)} -> cluster ${p.cluster}`)}`,
    `#   ${commentText(p.requiredBy ? `required by ${p.requiredBy.map(describePolicy).join(', ')} (propagateDeps)` : `claimed by ${describePolicy(p.policy)}`)}`,
    ...notChosen.map((n) => `#   ${commentText(`not on ${n.cluster}: ${n.reason}`)}`),
  ];
  const rows = explainPlacement(p);
  if (rows.length === 0) return `${[...head, '#   no field changed'].join('\n')}\n`;
  const width = Math.min(60, Math.max(...rows.map((r) => commentText(r.path || '/').length)));
  const lines = rows.map((r) => {
    const extra = r.overwritten.length ? ` (overwrote: ${r.overwritten.join('; ')})` : '';
    return `#   ${commentText(r.path || '/').padEnd(width)}  ${commentText(`${r.op === 'remove' ? 'removed by' : 'set by'} ${r.setBy}${extra}`)}`;
  });
  return `${[...head, ...lines].join('\n')}\n`;
}

/** `CLUSTER/KIND/NAMESPACE/NAME`, or `CLUSTER/KIND/NAME` when the object has no namespace (names never hold a `/`). */
export function nameLine(p: { cluster: string; object: unknown }): string {
  const r = refOf(p.object);
  return [p.cluster, r.kind, ...(r.namespace ? [r.namespace] : []), r.name].join('/');
}

export async function run(values: RenderFlags, io: CommandIO): Promise<number> {
  const input: InputOptions = { filenames: values.filename, recursive: values.recursive };
  if (values.output === 'name' && values.explain)
    throw new UsageError('--explain does not apply to -o name; use -o yaml or -o json');

  const read = await readOrInterrupted('render', input, io);
  if (typeof read === 'number') return read;
  const { documents, denied, problems, notes } = checkInputs(read);
  if (read.documents.length === 0 && read.errors.length === 0) problems.push(nothingIn('render', input));
  for (const n of notes) io.stderr.write(`${n}\n`);
  const sources = new SourceIndex(documents);

  // -o yaml and -o name write each placement as it is made and keep none (the memory of one, not of all);
  // -o json and --explain need them all (one document; which clusters a template does not go to).
  const streaming = values.output !== 'json' && !values.explain;
  const placements: DetailedPlacement[] = [];
  let written = 0;
  const result = renderEach(
    { objects: documents.filter((d) => !denied.has(d)).map((d) => d.object) },
    {
      explain: values.explain,
      now: Date.now(),
      ...(values.cluster.length > 0 ? { clusters: values.cluster } : {}),
    },
    (p) => {
      if (!streaming) placements.push(p);
      else if (values.output === 'name') io.stdout.write(`${nameLine(p)}\n`);
      else io.stdout.write(`${written++ > 0 ? '---\n' : ''}${header(p)}${writeYaml(p.object)}`);
    },
  );
  for (const w of result.warnings) {
    const src = sources.sourceOf(w.object);
    io.stderr.write(`warning: ${src ? `${src}: ` : ''}${describeRef(w.object)}: ${w.message}\n`);
  }
  for (const e of result.errors) {
    const src = sources.sourceOf(e.object);
    problems.push(
      `${src ? `${src}: ` : ''}${describeRef(e.object)}${e.cluster ? ` on cluster ${e.cluster}` : ''}: ${e.message}`,
    );
  }
  if (values.cluster.length > 0) {
    const known = new Set(
      documents
        .map((d) => d.object)
        .filter((o) => refOf(o).kind === 'Cluster')
        .map((o) => refOf(o).name),
    );
    for (const c of values.cluster)
      if (!known.has(c)) problems.push(`--cluster ${c}: no Cluster named ${JSON.stringify(c)} in the input`);
  }

  if (values.output === 'json') {
    const out = {
      placements: placements.map((p) => ({
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
  } else if (!streaming) {
    // --explain: each template's first placement also says which clusters it does not go to, and why.
    const notChosen = new Map<string, Array<{ cluster: string; reason: string }>>();
    for (const s of result.skipped ?? []) {
      const k = JSON.stringify(s.template);
      notChosen.set(k, [...(notChosen.get(k) ?? []), s]);
    }
    const said = new Set<string>();
    const docs = placements.map((p) => {
      const k = JSON.stringify(p.template);
      const first = !said.has(k);
      said.add(k);
      return `${header(p)}${explanation(p, first ? (notChosen.get(k) ?? []) : [])}${writeYaml(p.object)}`;
    });
    if (docs.length > 0) io.stdout.write(`${docs.join('---\n')}`);
  }
  for (const u of result.unmatched) {
    const src = sources.sourceOf(u);
    io.stderr.write(
      `note: ${src ? `${src}: ` : ''}${describeRef(u)} matches no PropagationPolicy or ClusterPropagationPolicy; not rendered\n`,
    );
  }
  for (const p of problems) io.stderr.write(`error: ${p}\n`);
  const clusters = documents.filter(
    (d) => !denied.has(d) && isAdmitted(d.object) && refOf(d.object).kind === 'Cluster',
  );
  if (clusters.length === 0 && documents.length > 0) io.stderr.write(`note: ${NO_CLUSTERS_HINT}\n`);
  return problems.length > 0 ? 1 : 0;
}
