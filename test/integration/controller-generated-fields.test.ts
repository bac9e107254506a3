// Fields the hub's apiserver generates for its own copy of a template (a Job's selector and pod labels
// naming the hub's uid, a Service's cluster IP) or that the hub's controllers write (a Deployment's
// revision, a PVC's selected node, a token Secret's data, a ServiceAccount's token Secrets) do not go to
// the members: each kind Karmada's prune step names, created on a real hub and propagated to a real
// member, which accepts the copy and fills in its own. The controller runs in this process.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, type Obj, prepareHub, startController } from './controller-io.js';

const WAIT_MS = 60_000;
const NS = 'generated';
const meta = (name: string, extra: Obj = {}) => ({ name, namespace: NS, ...extra });

const job: Obj = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: meta('pi'),
  spec: {
    ttlSecondsAfterFinished: 600,
    template: {
      metadata: { labels: { app: 'pi' } },
      spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'docker.io/library/perl:5' }] },
    },
  },
};
const service: Obj = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: meta('web'),
  spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
};
const serviceAccount: Obj = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: meta('builder'),
  // What a hub before Kubernetes 1.24 generated for every ServiceAccount, beside one the user named.
  secrets: [{ name: 'builder-token-x7k2p' }, { name: 'registry' }],
};
const tokenSecret: Obj = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: meta('builder-token', {
    annotations: {
      'kubernetes.io/service-account.name': 'builder',
      // What the hub's token controller writes.
      'kubernetes.io/service-account.uid': '6a4e0a57-6a43-4c1b-8d8e-2d1f3f0b9c11',
    },
  }),
  type: 'kubernetes.io/service-account-token',
  data: { token: Buffer.from('hub-token').toString('base64') },
};
const claim: Obj = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  // What the hub's scheduler writes for a WaitForFirstConsumer claim.
  metadata: meta('data', { annotations: { 'volume.kubernetes.io/selected-node': 'hub-node-1', team: 'a' } }),
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
};
const deployment: Obj = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  // What the hub's deployment controller writes.
  metadata: meta('web', {
    annotations: {
      'deployment.kubernetes.io/revision': '4',
      'deployment.kubernetes.io/revision-history': '1,3',
      team: 'a',
    },
  }),
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'docker.io/library/nginx:1.27' }] },
    },
  },
};
const templates = [job, service, serviceAccount, tokenSecret, claim, deployment];

const policy: Obj = {
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: meta('generated'),
  spec: {
    resourceSelectors: templates.map((t) => ({
      apiVersion: t.apiVersion,
      kind: t.kind,
      name: (t.metadata as Obj).name,
    })),
    placement: { clusterAffinity: { clusterNames: ['member1'] } },
  },
};

const paths = {
  job: `/apis/batch/v1/namespaces/${NS}/jobs/pi`,
  service: `/api/v1/namespaces/${NS}/services/web`,
  serviceAccount: `/api/v1/namespaces/${NS}/serviceaccounts/builder`,
  tokenSecret: `/api/v1/namespaces/${NS}/secrets/builder-token`,
  claim: `/api/v1/namespaces/${NS}/persistentvolumeclaims/data`,
  deployment: `/apis/apps/v1/namespaces/${NS}/deployments/web`,
};

const metadataOf = (o: Obj | undefined) => (o?.metadata ?? {}) as Obj;
const specOf = (o: Obj | undefined) => (o?.spec ?? {}) as Obj;
const annotationsOf = (o: Obj | undefined) => (metadataOf(o).annotations ?? {}) as Record<string, string>;

void describe('flotilla controller: fields the hub generated stay on the hub', () => {
  const env = useEnvironment({ members: 1 });
  let hub: KubeClient;
  let member: KubeClient;
  const stop = new AbortController();
  const out = capturingIO(stop.signal);
  let controller: Promise<number>;
  /** The member's copy of `t`; when it never comes, the failure shows what the binding said of the member. */
  const onMember = async (t: Obj, path: string) => {
    const o = await eventually(() => getObject(member, path), Boolean, WAIT_MS, 200);
    const name = `${String((t.metadata as Obj).name)}-${String(t.kind).toLowerCase()}`;
    const binding = await getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/${name}`);
    assert.ok(o, `${path} never reached the member: ${JSON.stringify((binding?.status as Obj | undefined)?.clusters)}`);
    return o;
  };

  before(async () => {
    const e = env();
    const c = await prepareHub(e, NS);
    hub = c.hub;
    member = c.members[0] as KubeClient;
    const created = await kubectl(e.hub.kubeconfigPath, ['create', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: templates,
    });
    assert.equal(created.status, 0, created.stderr);
    // The member already uses the cluster IP the hub gave its Service (both allocate from 10.0.0.0/24).
    const hubIP = specOf(await getObject(hub, paths.service)).clusterIP;
    assert.equal(typeof hubIP, 'string');
    const taken = await kubectl(e.members[0]!.kubeconfigPath, ['create', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('other'),
      spec: { clusterIP: hubIP, ports: [{ port: 80 }] },
    });
    assert.equal(taken.status, 0, taken.stderr);
    const applied = await kubectl(e.hub.kubeconfigPath, ['apply', '-f', '-'], policy);
    assert.equal(applied.status, 0, applied.stderr);
    controller = startController(e.hub, e.membersKubeconfigPath, out);
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('Job: the member takes it, with a selector and pod labels of its own uid; no TTL', async () => {
    const hubJob = await getObject(hub, paths.job);
    const hubUid = metadataOf(hubJob).uid;
    assert.equal(
      (specOf(hubJob).selector as { matchLabels: Record<string, string> }).matchLabels[
        'batch.kubernetes.io/controller-uid'
      ],
      hubUid,
      'the hub generated a selector',
    );
    const copy = await onMember(job, paths.job);
    const uid = metadataOf(copy).uid;
    assert.notEqual(uid, hubUid);
    const spec = specOf(copy);
    assert.equal(
      (spec.selector as { matchLabels: Record<string, string> }).matchLabels['batch.kubernetes.io/controller-uid'],
      uid,
    );
    const labels = ((spec.template as Obj).metadata as Obj).labels as Record<string, string>;
    assert.equal(labels['controller-uid'], uid);
    assert.equal(labels['batch.kubernetes.io/job-name'], 'pi');
    assert.equal(labels.app, 'pi');
    assert.equal(spec.ttlSecondsAfterFinished, undefined);
  });

  void it('Service: the member takes it with a cluster IP of its own (the hub’s is taken there)', async () => {
    const hubIP = specOf(await getObject(hub, paths.service)).clusterIP;
    const copy = await onMember(service, paths.service);
    const ip = specOf(copy).clusterIP;
    assert.equal(typeof ip, 'string');
    assert.notEqual(ip, hubIP);
    assert.deepEqual(specOf(copy).clusterIPs, [ip]);
  });

  void it('ServiceAccount: the hub’s token Secrets are not listed on the member; the user’s is', async () => {
    const copy = await onMember(serviceAccount, paths.serviceAccount);
    assert.deepEqual(copy.secrets, [{ name: 'registry' }]);
  });

  void it('Secret of type service-account-token: no data, no account uid; the account name stays', async () => {
    const copy = await onMember(tokenSecret, paths.tokenSecret);
    assert.equal(copy.data, undefined);
    const annotations = annotationsOf(copy);
    assert.equal(annotations['kubernetes.io/service-account.uid'], undefined);
    assert.equal(annotations['kubernetes.io/service-account.name'], 'builder');
  });

  void it('PersistentVolumeClaim: not bound to a node of the hub', async () => {
    const copy = await onMember(claim, paths.claim);
    assert.equal(annotationsOf(copy)['volume.kubernetes.io/selected-node'], undefined);
    assert.equal(annotationsOf(copy).team, 'a');
  });

  void it('Deployment: no revision annotations from the hub', async () => {
    const copy = await onMember(deployment, paths.deployment);
    assert.equal(annotationsOf(copy)['deployment.kubernetes.io/revision'], undefined);
    assert.equal(annotationsOf(copy)['deployment.kubernetes.io/revision-history'], undefined);
    assert.equal(annotationsOf(copy).team, 'a');
  });
});
