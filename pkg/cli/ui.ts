// `flotilla ui`: pkg/fleet's read model of the hub (the user's kubeconfig) served as a live web page by
// pkg/ui. Flags and help are in ui-command.ts.

import { fleetFor } from '../fleet/index.js';
import { HubFleetView, UiServer } from '../ui/index.js';
import { UsageError, type CommandIO } from './command.js';
import { loadKubeConfigFor } from './kubeflags.js';
import type { UiFlags } from './ui-command.js';

/** How long the first lists may take before the page is served with what is listed. */
const SYNC_TIMEOUT_MS = 30_000;

/** `host:port`, `[v6]:port` or `:port` (all interfaces). */
export function parseAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  if (!m || port > 65535)
    throw new UsageError(
      `--address takes HOST:PORT (127.0.0.1:8080, [::1]:8080, :8080), got ${JSON.stringify(address)}`,
    );
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

export async function run(values: UiFlags, io: CommandIO): Promise<number> {
  const { host, port } = parseAddress(values.address);
  const kubeConfig = await loadKubeConfigFor(values, io);
  const fleet = fleetFor(kubeConfig, { leaseNamespace: values['lease-namespace'], userAgent: 'flotilla-ui' });
  const say = (line: string) => io.stderr.write(`ui: ${line}\n`);
  const view = new HubFleetView(fleet, { onError: (e) => say(`error: ${e instanceof Error ? e.message : String(e)}`) });
  try {
    await view.start(io.signal, SYNC_TIMEOUT_MS);
  } catch (err: unknown) {
    say(`error: cannot read the hub: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  for (const p of fleet.problems()) say(`warning: ${p}`);
  const server = new UiServer({
    view,
    host,
    port,
    onError: (e) => say(`error: ${e instanceof Error ? e.message : String(e)}`),
  });
  let bound;
  try {
    bound = await server.start(io.signal);
  } catch (err: unknown) {
    say(`error: cannot listen on ${values.address}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  const shown = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  io.stdout.write(`Serving the fleet on http://${shown}:${bound.port}/ (read-only; Ctrl-C stops)\n`);
  await server.closed();
  return 0;
}
