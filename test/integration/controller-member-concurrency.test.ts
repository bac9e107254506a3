// --member-concurrency bounds what the controller has in flight on one member. The member is reached
// through a proxy that holds every ConfigMap apply unanswered: with twelve templates to place and
// --member-concurrency 2, two applies wait at the member and no third is sent until one is answered;
// released, all twelve arrive. Real apiservers throughout.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { HoldingProxy } from '../holding-proxy.js';
import { getObject, prepareHub, spawnFlotilla, stopFlotilla, type FlotillaProcess } from './controller-io.js';

const WAIT_MS = 60_000;
const NS = 'member-concurrency';
const TEMPLATES = 12;

void describe('flotilla controller --member-concurrency', () => {
  const env = useEnvironment({ members: 1 });
  let members: KubeClient[];
  let controller: FlotillaProcess | undefined;
  let proxy: HoldingProxy | undefined;

  before(async () => {
    const e = env();
    ({ members } = await prepareHub(e, NS));
    const applied = await kubectl(e.hub.kubeconfigPath, ['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name: 'member1' } },
        ...Array.from({ length: TEMPLATES }, (_, i) => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${i}`, namespace: NS },
          data: { i: String(i) },
        })),
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'PropagationPolicy',
          metadata: { name: 'all', namespace: NS },
          spec: {
            resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
            placement: { clusterAffinity: { clusterNames: ['member1'] } },
          },
        },
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
  });

  after(async () => {
    if (controller) await stopFlotilla(controller);
    await proxy?.close();
  });

  void it('keeps at most that many applies in flight on a member, and applies every template once they are answered', async () => {
    const e = env();
    proxy = await HoldingProxy.start(e.members[0]!.kubeconfigPath);
    const viaProxy = join(e.dir, 'member-via-proxy.kubeconfig');
    proxy.writeKubeconfig(viaProxy, 'member1');
    proxy.hold((method, url) => method === 'PATCH' && url.pathname.startsWith(`/api/v1/namespaces/${NS}/configmaps/`));
    controller = spawnFlotilla(
      [
        'controller',
        '--kubeconfig',
        e.hub.kubeconfigPath,
        '--members-kubeconfig',
        viaProxy,
        '--namespace',
        'flotilla-system',
        '--member-concurrency',
        '2',
      ],
      join(e.dir, 'logs', 'flotilla-controller-member-concurrency.log'),
    );
    const p = proxy;
    const held = await eventually(
      () => Promise.resolve(p.held),
      (n) => n >= 2,
      WAIT_MS,
      100,
    );
    assert.equal(held, 2, 'two applies wait at the member');
    // Longer than the controller takes to send the other ten when nothing bounds it.
    await sleep(3_000);
    assert.equal(p.held, 2, `still two, not more: ${controller.log().slice(-2000)}`);

    p.release();
    const present = async () => {
      let n = 0;
      for (let i = 0; i < TEMPLATES; i++)
        if (await getObject(members[0]!, `/api/v1/namespaces/${NS}/configmaps/cm-${i}`)) n++;
      return n;
    };
    assert.equal(await eventually(present, (n) => n === TEMPLATES, WAIT_MS, 250), TEMPLATES);
    const applies = p.seen.filter((s) => s.startsWith(`PATCH /api/v1/namespaces/${NS}/configmaps/`));
    assert.equal(applies.length, TEMPLATES, 'one apply per template');
  });
});
