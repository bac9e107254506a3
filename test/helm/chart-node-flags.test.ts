// The chart's agent.nodeFlags and controller.nodeFlags: node's own (V8) flags, which NODE_OPTIONS refuses,
// put on the container's command before the image's program; none runs the image's `flotilla` launcher.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';

import { AGENT_MODE, CHART, helmSync } from '../helm-binary.js';
import { agentConcurrency, agentNodeFlags, controllerNodeFlags } from '../node-launch.js';

type Obj = Record<string, unknown>;
const PROGRAM = '/app/dist/cmd/flotilla/main.js';

/** `helm template` with extra flags into `namespace`: the first container of Deployment `name`. */
function containerOf(namespace: string, name: string, ...flags: string[]): Obj {
  const r = helmSync(['template', 'flotilla', CHART, '--namespace', namespace, ...flags]);
  assert.equal(r.status, 0, r.stderr);
  const deployment = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj)
    .find((o) => o?.kind === 'Deployment' && (o.metadata as Obj).name === name);
  assert.ok(deployment, `Deployment ${name}`);
  return ((deployment.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers[0] as Obj;
}

/** `helm template` with `flags` is refused: it exits non-zero, its message matching `path` (the value's schema path). */
function refuses(namespace: string, flags: string[], path: RegExp): void {
  const r = helmSync(['template', 'flotilla', CHART, '--namespace', namespace, ...flags]);
  assert.notEqual(r.status, 0, r.stdout);
  assert.match(r.stderr, path);
}

const KINDS = [
  { kind: 'agent', namespace: 'flotilla-agent', deployment: 'flotilla-agent', mode: AGENT_MODE, chart: agentNodeFlags },
  {
    kind: 'controller',
    namespace: 'flotilla-system',
    deployment: 'flotilla-controller',
    mode: [],
    chart: controllerNodeFlags,
  },
] as const;

void describe('the chart: node flags', () => {
  for (const k of KINDS) {
    void it(`runs the ${k.kind} as node with ${k.kind}.nodeFlags, then the program; the launcher without them`, () => {
      const given = containerOf(
        k.namespace,
        k.deployment,
        ...k.mode,
        '--set-json',
        `${k.kind}.nodeFlags=["--max-semi-space-size=2","--optimize-for-size"]`,
      );
      assert.deepStrictEqual(given.command, [
        '/nodejs/bin/node',
        '--max-semi-space-size=2',
        '--optimize-for-size',
        PROGRAM,
      ]);
      assert.equal((given.args as string[])[0], k.kind);
      const none = containerOf(k.namespace, k.deployment, ...k.mode, '--set-json', `${k.kind}.nodeFlags=[]`);
      assert.deepStrictEqual(none.command, ['flotilla']);
      assert.deepStrictEqual(none.args, given.args, 'the flags change the command only');
    });

    void it(`runs the ${k.kind} by default with the flags tests and benches start it with (test/node-launch.ts)`, () => {
      const flags = k.chart({});
      const command = containerOf(k.namespace, k.deployment, ...k.mode).command;
      assert.deepStrictEqual(command, flags.length > 0 ? ['/nodejs/bin/node', ...flags, PROGRAM] : ['flotilla']);
    });

    if (k.kind === 'agent')
      void it('runs the agent by default with the concurrency benches start it with (test/node-launch.ts)', () => {
        const args = containerOf(k.namespace, k.deployment, ...k.mode).args as string[];
        assert.ok(args.includes(`--concurrency=${agentConcurrency({})}`), args.join(' '));
      });

    void it(`refuses a ${k.kind}.nodeFlags entry that is not one flag, naming the value`, () => {
      for (const bad of ['--lite-mode; rm -rf /', 'lite-mode', '--x=$(id)'])
        refuses(
          k.namespace,
          [...k.mode, '--set-json', `${k.kind}.nodeFlags=${JSON.stringify([bad])}`],
          new RegExp(`${k.kind}/nodeFlags/0`),
        );
    });
  }
});
