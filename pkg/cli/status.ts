// `flotilla status clusters|templates|template NAME|policies`: the fleet's read model (pkg/fleet) printed
// once, or again on every change with --watch. Flags and help are in status-command.ts; the tables in
// status-tables.ts.

import { fleetFor, type Fleet, type MatrixFilter, type ObjectRef } from '../fleet/index.js';
import { sleep } from '../runtime/clock.js';
import { writeYaml } from '../yaml/write.js';
import type { CommandIO } from './command.js';
import { loadKubeConfigFor } from './kubeflags.js';
import type {
  StatusClustersFlags,
  StatusPoliciesFlags,
  StatusTemplateFlags,
  StatusTemplatesFlags,
} from './status-command.js';
import { clustersTable, matrixTable, policiesTable, templateText } from './status-tables.js';

/** How long the first lists may take before what is listed is shown (with what is not, on stderr). */
const SYNC_TIMEOUT_MS = 30_000;
/** --watch prints at most this often: changes in between are shown together. */
const WATCH_INTERVAL_MS = 1_000;

type Common = StatusClustersFlags;

/** What one view shows: the table text and the data behind it (for -o json|yaml). */
interface Shown {
  text: string;
  data: unknown;
}

class StatusError extends Error {
  readonly code = 'STATUS';
}

function render(shown: Shown, output: Common['output']): string {
  if (output === 'json') return `${JSON.stringify(shown.data, null, 2)}\n`;
  if (output === 'yaml') return writeYaml(shown.data);
  return shown.text;
}

/** Between two prints of --watch: a blank line between tables, `---` between YAML documents. */
function separator(output: Common['output']): string {
  return output === 'yaml' ? '---\n' : output === 'json' ? '' : '\n';
}

function say(io: CommandIO, command: string, kind: 'error' | 'warning', lines: readonly string[]): void {
  for (const l of lines) io.stderr.write(`${command}: ${kind}: ${l}\n`);
}

/**
 * Reads the hub, shows the view once (or on every change with --watch, until interrupted), and says on
 * stderr what could not be read. Exit 0 when everything the view needs was read.
 */
async function session(
  command: string,
  values: Common,
  io: CommandIO,
  show: (fleet: Fleet, signal: AbortSignal) => Promise<Shown>,
): Promise<number> {
  const kubeConfig = await loadKubeConfigFor(values, io);
  const fleet = fleetFor(kubeConfig, { leaseNamespace: values['lease-namespace'] });
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, io.signal]);
  const running = fleet.start(signal).catch(() => undefined);
  try {
    try {
      await fleet.waitForSync(signal, SYNC_TIMEOUT_MS);
    } catch (err: unknown) {
      throw new StatusError(`cannot read the hub: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    let last = '';
    let said = '';
    let dirty = false;
    let wake: (() => void) | undefined;
    const off = fleet.subscribe(() => {
      dirty = true;
      wake?.();
    });
    try {
      for (let first = true; ; first = false) {
        const out = render(await show(fleet, signal), values.output);
        if (out !== last) {
          io.stdout.write(`${first ? '' : separator(values.output)}${out}`);
          last = out;
        }
        const problems = fleet.problems();
        const warnings = fleet.warnings();
        const now = JSON.stringify([problems, warnings]);
        if (now !== said) {
          say(io, command, 'error', problems);
          say(io, command, 'warning', warnings);
          said = now;
        }
        if (!values.watch || signal.aborted) return problems.length > 0 ? 1 : 0;
        // Wait for a change, then let more arrive for a moment: one print for a burst of events.
        if (!dirty)
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        wake = undefined;
        await sleep(WATCH_INTERVAL_MS, signal).catch(() => undefined);
        if (signal.aborted) return 0;
        dirty = false;
      }
    } finally {
      off();
    }
  } finally {
    stop.abort();
    await running;
  }
}

function fail(command: string, io: CommandIO, err: unknown): number {
  if (!(err instanceof StatusError)) throw err;
  io.stderr.write(`${command}: ${err.message}\n`);
  return 1;
}

export async function clusters(values: StatusClustersFlags, io: CommandIO): Promise<number> {
  const command = 'flotilla status clusters';
  try {
    return await session(command, values, io, (fleet) => {
      const list = fleet.clusters();
      return Promise.resolve({
        text:
          list.length === 0 ? 'No clusters on the hub.\n' : clustersTable(list, Date.now(), values.output === 'wide'),
        data: { clusters: list },
      });
    });
  } catch (err: unknown) {
    return fail(command, io, err);
  }
}

export async function templates(values: StatusTemplatesFlags, io: CommandIO): Promise<number> {
  const command = 'flotilla status templates';
  const filter: MatrixFilter = {
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    ...(values.kind !== undefined ? { kind: values.kind } : {}),
    ...(values.policy !== undefined ? { policy: values.policy } : {}),
    ...(values.cluster !== undefined ? { cluster: values.cluster } : {}),
    ...(values.state !== undefined ? { state: values.state } : {}),
  };
  try {
    return await session(command, values, io, (fleet) => {
      const m = fleet.matrix(filter);
      const columns = values.cluster !== undefined ? [values.cluster] : m.clusters;
      const text =
        m.rows.length > 0
          ? matrixTable(m, columns, values.output === 'wide')
          : m.total === 0
            ? 'No templates with a ResourceBinding on the hub.\n'
            : `No templates match (${m.total} on the hub).\n`;
      return Promise.resolve({ text, data: m });
    });
  } catch (err: unknown) {
    return fail(command, io, err);
  }
}

function describe(r: ObjectRef): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

export async function template(values: StatusTemplateFlags, io: CommandIO, args: string[]): Promise<number> {
  const command = 'flotilla status template';
  const name = args[0] ?? '';
  try {
    return await session(command, values, io, async (fleet, signal) => {
      const found = fleet.findTemplates({
        name,
        ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
      });
      const where = values.namespace !== undefined ? ` in namespace ${values.namespace}` : '';
      if (found.length === 0)
        throw new StatusError(
          `no template named ${JSON.stringify(name)}${where} has a ResourceBinding on the hub ('flotilla status templates' lists them)`,
        );
      if (found.length > 1)
        throw new StatusError(
          `${JSON.stringify(name)}${where} names ${found.length} templates: ${found.map(describe).join(', ')}; give KIND/NAME or -n NAMESPACE`,
        );
      const ref = found[0] as ObjectRef;
      const detail = await fleet.template(ref, signal);
      let events: Awaited<ReturnType<Fleet['events']>> = [];
      try {
        events = await fleet.events(ref, signal);
      } catch (err: unknown) {
        detail.errors.push(`cannot read its Events: ${err instanceof Error ? err.message : String(err)}`);
      }
      return { text: templateText(detail, events, Date.now()), data: { ...detail, events } };
    });
  } catch (err: unknown) {
    return fail(command, io, err);
  }
}

export async function policies(values: StatusPoliciesFlags, io: CommandIO): Promise<number> {
  const command = 'flotilla status policies';
  try {
    return await session(command, values, io, (fleet) => {
      const list = fleet
        .policies()
        .filter((p) => values.namespace === undefined || p.namespace === undefined || p.namespace === values.namespace);
      return Promise.resolve({
        text: list.length === 0 ? 'No policies on the hub.\n' : policiesTable(list, values.output === 'wide'),
        data: { policies: list },
      });
    });
  } catch (err: unknown) {
    return fail(command, io, err);
  }
}
