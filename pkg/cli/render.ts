// `flotilla render`: per-cluster final objects from templates, policies and Clusters, offline.

import { stringify } from 'yaml';
import { formatExplanation, refOf, renderDetailed, type DetailedPlacement } from '../engine/index.js';
import { checkDocuments, formatFieldError } from './check.js';
import { parseFlags, UsageError, type Command, type CommandIO } from './command.js';
import { describeRef, readInputs, SourceIndex } from './inputs.js';

const usage = `Render the final object each member cluster gets, without any cluster.

Usage:
  flotilla render -f PATH... [-o yaml|json] [--cluster NAME] [--explain]

Reads resource templates, PropagationPolicies, ClusterPropagationPolicies, OverridePolicies,
ClusterOverridePolicies and Clusters (policy.flotilla.io or policy.karmada.io, cluster.flotilla.io or
cluster.karmada.io) from files, directories and '-' (stdin); prints one document per (template, cluster).

Options:
  -f, --filename PATH   file, directory (recursive: *.yaml, *.yml, *.json) or '-'; repeatable
  -o, --output FORMAT   yaml (default) or json
      --cluster NAME    only the objects for this cluster; repeatable
      --explain         say which policy and rule set each changed field (YAML comments; "explain" in JSON)
  -h, --help            this help

Policies and Clusters the admission webhook would deny are reported and left out.
Exit status: 0 rendered; 1 invalid input or a failed render (every problem is printed); 2 usage.`;

function header(p: DetailedPlacement): string {
  const t = p.template;
  const overrides = p.overrides.map((o) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`).join(', ');
  return `# cluster: ${p.cluster}\n# template: ${describeRef(t)}\n# policy: ${describeRef(p.policy)}\n${overrides ? `# overrides: ${overrides}\n` : ''}`;
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const values = parseFlags(args, {
        filename: { type: 'string', short: 'f', multiple: true },
        output: { type: 'string', short: 'o', default: 'yaml' },
        cluster: { type: 'string', multiple: true },
        explain: { type: 'boolean', default: false },
      });
  if (values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  const files = values.filename ?? [];
  if (files.length === 0) throw new UsageError('at least one -f PATH is required');
  if (values.output !== 'yaml' && values.output !== 'json') throw new UsageError(`--output must be yaml or json, not ${JSON.stringify(values.output)}`);

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
    ...(values.cluster ? { clusters: values.cluster } : {}),
  });
  for (const e of result.errors) {
    const src = sources.sourceOf(e.object);
    problems.push(`${src ? `${src}: ` : ''}${describeRef(e.object)}${e.cluster ? ` on cluster ${e.cluster}` : ''}: ${e.message}`);
  }
  if (values.cluster) {
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
  } else {
    const docs = result.placements.map((p) => `${header(p)}${values.explain ? formatExplanation(p) : ''}${stringify(p.object, { indentSeq: false, lineWidth: 0 })}`);
    if (docs.length > 0) io.stdout.write(`${docs.join('---\n')}`);
  }
  for (const u of result.unmatched) {
    const src = sources.sourceOf(u);
    io.stderr.write(`note: ${src ? `${src}: ` : ''}${describeRef(u)} matches no PropagationPolicy or ClusterPropagationPolicy; not rendered\n`);
  }
  for (const p of problems) io.stderr.write(`error: ${p}\n`);
  return problems.length > 0 ? 1 : 0;
}

export const command: Command = {
  name: 'render',
  summary: 'Render the per-cluster objects from templates, policies and Clusters (offline)',
  usage,
  run,
};
