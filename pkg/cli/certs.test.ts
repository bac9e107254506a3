import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsonpatch from 'fast-json-patch';

import { ecKeyPem } from '../../test/certs.js';
import { captureIO, type CapturedIO } from '../../test/cli-io.js';
import { createCA, createServingCert } from '../certs/index.js';
import { run } from './index.js';

type Obj = Record<string, unknown>;

function io(env: NodeJS.ProcessEnv = {}): CapturedIO {
  return captureIO({ env });
}

/**
 * Just enough of an apiserver for the certs flow: GET, POST (create), PUT (replace, conditional on
 * metadata.resourceVersion) and JSON-patch PATCH on stored objects.
 */
class FakeAPIServer {
  readonly objects = new Map<string, Obj>();
  readonly requests: string[] = [];
  /** Called with each request before it is served; a test plays another writer here. */
  beforeRequest: ((method: string, path: string) => void) | undefined;
  private server: Server | undefined;
  private version = 100;
  port = 0;

  nextVersion(): string {
    return String(++this.version);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        this.requests.push(`${req.method} ${path}`);
        this.beforeRequest?.(req.method ?? '', path);
        const reply = (code: number, value: unknown) => {
          res.writeHead(code, { 'content-type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        const status = (code: number, reason: string) =>
          reply(code, {
            apiVersion: 'v1',
            kind: 'Status',
            status: 'Failure',
            code,
            reason,
            message: `${reason}: ${path}`,
          });
        if (req.method === 'GET') {
          const o = this.objects.get(path);
          return o ? reply(200, o) : status(404, 'NotFound');
        }
        if (req.method === 'POST') {
          const o = JSON.parse(body) as { metadata: { name: string; resourceVersion?: string } };
          const at = `${path}/${o.metadata.name}`;
          if (this.objects.has(at)) return status(409, 'AlreadyExists');
          o.metadata.resourceVersion = this.nextVersion();
          this.objects.set(at, o);
          return reply(201, o);
        }
        if (req.method === 'PUT') {
          const current = this.objects.get(path) as { metadata: { resourceVersion?: string } } | undefined;
          if (!current) return status(404, 'NotFound');
          const o = JSON.parse(body) as { metadata: { resourceVersion?: string } };
          if (
            o.metadata.resourceVersion !== undefined &&
            o.metadata.resourceVersion !== current.metadata.resourceVersion
          )
            return status(409, 'Conflict');
          o.metadata.resourceVersion = this.nextVersion();
          this.objects.set(path, o);
          return reply(200, o);
        }
        if (req.method === 'PATCH') {
          const o = this.objects.get(path);
          if (!o) return status(404, 'NotFound');
          assert.equal(req.headers['content-type'], 'application/json-patch+json');
          const patched = jsonpatch.applyPatch(
            structuredClone(o),
            JSON.parse(body) as jsonpatch.Operation[],
            true,
            false,
          ).newDocument;
          this.objects.set(path, patched);
          return reply(200, patched);
        }
        return status(405, 'MethodNotAllowed');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server?.address() as AddressInfo).port;
  }

  kubeconfig(dir: string): string {
    const file = join(dir, 'kubeconfig');
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'fake',
      clusters: [
        { name: 'fake', cluster: { server: `http://127.0.0.1:${this.port}`, 'insecure-skip-tls-verify': true } },
      ],
      users: [{ name: 'fake', user: { token: 'token' } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
    };
    writeFileSync(file, JSON.stringify(config));
    return file;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const WEBHOOK_CONFIG = (kind: string) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind,
  metadata: { name: 'flotilla' },
  webhooks: ['a', 'b'].map((n) => ({
    name: `${n}.flotilla.io`,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: { service: { namespace: 'flotilla-system', name: 'flotilla-webhook', path: '/validate' } },
  })),
});
const CRD = (name: string, conversion: boolean) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name },
  spec: {
    group: 'policy.flotilla.io',
    names: { kind: 'X', plural: name.split('.')[0] },
    scope: 'Namespaced',
    versions: [],
    ...(conversion
      ? {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1'],
              clientConfig: { service: { namespace: 'flotilla-system', name: 'flotilla-webhook', path: '/convert' } },
            },
          },
        }
      : {}),
  },
});

void describe('flotilla certs create --cert-dir', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'certs-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  void it('writes a CA and a serving certificate for the Service names and extra hosts, signed by that CA', async () => {
    const t = io();
    const code = await run(
      [
        'certs',
        'create',
        '--service',
        'hook',
        '--namespace',
        'sys',
        '--cert-dir',
        dir,
        '--hosts',
        '127.0.0.1,hook.example.com',
      ],
      t,
    );
    assert.equal(code, 0, t.err());
    const ca = new X509Certificate(readFileSync(join(dir, 'ca.crt')));
    const cert = new X509Certificate(readFileSync(join(dir, 'tls.crt')));
    assert.ok(cert.verify(ca.publicKey), 'signed by the CA');
    assert.ok(cert.checkPrivateKey(createPrivateKey(readFileSync(join(dir, 'tls.key')))), 'the key matches');
    const sans = (cert.subjectAltName ?? '').split(', ');
    for (const san of [
      'DNS:hook',
      'DNS:hook.sys',
      'DNS:hook.sys.svc',
      'DNS:hook.sys.svc.cluster.local',
      'DNS:hook.example.com',
      'IP Address:127.0.0.1',
    ])
      assert.ok(sans.includes(san), san);
    assert.equal(statSync(join(dir, 'tls.key')).mode & 0o777, 0o600);
  });

  const mode = (path: string): number => statSync(path).mode & 0o777;

  void it('replaces an existing tls.key of mode 0644 with one of mode 0600, and leaves no temporary files', async () => {
    const out = join(dir, 'rewrite');
    const t = io();
    assert.equal(
      await run(['certs', 'create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', out], t),
      0,
      t.err(),
    );
    chmodSync(join(out, 'tls.key'), 0o644);
    const first = readFileSync(join(out, 'tls.key'), 'utf8');
    assert.equal(
      await run(['certs', 'create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', out], t),
      0,
      t.err(),
    );
    assert.notEqual(readFileSync(join(out, 'tls.key'), 'utf8'), first, 'a new key was written');
    assert.equal(mode(join(out, 'tls.key')), 0o600);
    assert.deepStrictEqual(readdirSync(out).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
  });

  void it('sets directory and file modes outright under umask 000', async () => {
    const out = join(dir, 'open', 'certs');
    const t = io();
    const umask = process.umask(0);
    try {
      assert.equal(
        await run(['certs', 'create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', out], t),
        0,
        t.err(),
      );
    } finally {
      process.umask(umask);
    }
    assert.equal(mode(join(dir, 'open')), 0o700, 'each directory created');
    assert.equal(mode(out), 0o700);
    assert.equal(mode(join(out, 'ca.crt')), 0o644);
    assert.equal(mode(join(out, 'tls.crt')), 0o644);
    assert.equal(mode(join(out, 'tls.key')), 0o600);
  });

  void it('leaves the mode of a directory that already exists alone', async () => {
    const out = mkdtempSync(join(dir, 'mine-'));
    chmodSync(out, 0o750);
    const t = io();
    assert.equal(
      await run(['certs', 'create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', out], t),
      0,
      t.err(),
    );
    assert.equal(mode(out), 0o750);
  });

  void it('exits 1 naming the directory when it cannot be made', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    const t = io();
    assert.equal(
      await run(
        ['certs', 'create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', join(dir, 'a-file', 'certs')],
        t,
      ),
      1,
    );
    assert.match(t.err(), /^flotilla certs create: creating directory .*a-file\/certs: ENOTDIR/);
  });

  void it('rejects every --hosts entry that is neither a DNS name nor an IP address, naming the flag and the values', async () => {
    const t = io();
    assert.equal(
      await run(
        [
          'certs',
          'create',
          '--service',
          'hook',
          '--namespace',
          'sys',
          '--cert-dir',
          join(dir, 'never'),
          '--hosts',
          'a b,ok.example,-bad-,300.1.1.1,10.0.0.1',
        ],
        t,
      ),
      2,
    );
    assert.match(t.err(), /^flotilla certs create: --hosts: /);
    for (const bad of ['"a b"', '"-bad-"', '"300.1.1.1"']) assert.ok(t.err().includes(bad), `${bad} in ${t.err()}`);
    for (const good of ['ok.example', '10.0.0.1']) assert.ok(!t.err().includes(good), `${good} in ${t.err()}`);
    assert.ok(!existsSync(join(dir, 'never')), 'nothing written');
  });

  const usage: Array<{ name: string; args: string[]; message: RegExp }> = [
    {
      name: 'create without --service',
      args: ['create', '--namespace', 'sys', '--cert-dir', '/tmp/x'],
      message: /^flotilla certs create: --service is required$/m,
    },
    {
      name: 'neither --secret nor --cert-dir',
      args: ['create', '--service', 'hook', '--namespace', 'sys'],
      message: /create needs --secret, --cert-dir or both/,
    },
    {
      name: 'a non-numeric --valid-days',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--valid-days', 'soon'],
      message: /--valid-days must be a whole number of days from 1 to 36500, got "soon"/,
    },
    {
      name: '--valid-days 3000000',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--valid-days', '3000000'],
      message: /--valid-days must be a whole number of days from 1 to 36500, got "3000000"/,
    },
    {
      name: '--valid-days 36501',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--valid-days', '36501'],
      message: /from 1 to 36500, got "36501"/,
    },
    {
      name: '--valid-days 0',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--valid-days', '0'],
      message: /from 1 to 36500, got "0"/,
    },
    {
      name: '--hosts with a space in a name',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--hosts', 'a b'],
      message: /--hosts: "a b" /,
    },
    {
      name: '--hosts with a label starting with "-"',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--hosts=-bad-'],
      message: /--hosts: "-bad-" /,
    },
    {
      name: '--hosts with an out-of-range IPv4 address',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--hosts', '300.1.1.1'],
      message: /--hosts: "300\.1\.1\.1" /,
    },
    {
      name: '--hosts with a wildcard not in the first label',
      args: ['create', '--service', 'hook', '--namespace', 'sys', '--cert-dir', '/tmp/x', '--hosts', 'a.*.example'],
      message: /--hosts: "a\.\*\.example" /,
    },
    {
      name: 'a --service that is not a DNS label',
      args: ['create', '--service', 'Hook Svc', '--namespace', 'sys', '--cert-dir', '/tmp/x'],
      message: /--service must be a DNS label .* got "Hook Svc"/,
    },
    {
      name: 'a --namespace that is not a DNS label',
      args: ['create', '--service', 'hook', '--namespace', 'sys.x', '--cert-dir', '/tmp/x'],
      message: /--namespace must be a DNS label .* got "sys.x"/,
    },
    {
      name: 'patch without --secret',
      args: ['patch', '--namespace', 'sys'],
      message: /^flotilla certs patch: --secret is required$/m,
    },
    {
      name: 'an unknown flag',
      args: ['create', '--servce', 'hook'],
      message: /unknown flag --servce; did you mean --service\?/,
    },
    { name: 'an unknown subcommand', args: ['rotate'], message: /^flotilla certs: unknown command "rotate"/m },
    { name: 'a missing subcommand', args: [], message: /^flotilla certs: missing command: one of create, patch$/m },
  ];
  for (const u of usage) {
    void it(`rejects ${u.name} as a usage error`, async () => {
      const t = io();
      assert.equal(await run(['certs', ...u.args], t), 2);
      assert.match(t.err(), u.message);
    });
  }
});

void describe('flotilla certs against an apiserver', () => {
  const api = new FakeAPIServer();
  let dir: string;
  let kubeconfig: string;
  const SECRET = '/api/v1/namespaces/sys/secrets/hook-cert';

  before(async () => {
    await api.start();
    dir = mkdtempSync(join(tmpdir(), 'certs-'));
    kubeconfig = api.kubeconfig(dir);
    api.objects.set(
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/flotilla',
      WEBHOOK_CONFIG('ValidatingWebhookConfiguration'),
    );
    api.objects.set(
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/flotilla',
      WEBHOOK_CONFIG('MutatingWebhookConfiguration'),
    );
    for (const name of ['overridepolicies.policy.flotilla.io', 'propagationpolicies.policy.flotilla.io'])
      api.objects.set(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, CRD(name, true));
    api.objects.set(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/plain.policy.flotilla.io',
      CRD('plain.policy.flotilla.io', false),
    );
  });
  after(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('creates a TLS Secret with the CA, certificate and key', async () => {
    const t = io();
    assert.equal(
      await run(
        [
          'certs',
          'create',
          '--service',
          'hook',
          '--namespace',
          'sys',
          '--secret',
          'hook-cert',
          '--kubeconfig',
          kubeconfig,
        ],
        t,
      ),
      0,
      t.err(),
    );
    const secret = api.objects.get(SECRET) as { type: string; data: Record<string, string> };
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepStrictEqual(Object.keys(secret.data).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
    const ca = new X509Certificate(Buffer.from(secret.data['ca.crt'] ?? '', 'base64'));
    assert.ok(new X509Certificate(Buffer.from(secret.data['tls.crt'] ?? '', 'base64')).verify(ca.publicKey));
  });

  void it('keeps an existing Secret and writes its certificate to --cert-dir', async () => {
    const before = structuredClone(api.objects.get(SECRET)) as { data: Record<string, string> };
    const out = join(dir, 'out');
    const t = io({ KUBECONFIG: kubeconfig });
    assert.equal(
      await run(
        ['certs', 'create', '--service', 'hook', '--namespace', 'sys', '--secret', 'hook-cert', '--cert-dir', out],
        t,
      ),
      0,
      t.err(),
    );
    assert.match(t.out(), /exists; keeping its certificate/);
    assert.deepStrictEqual(api.objects.get(SECRET), before);
    assert.equal(
      readFileSync(join(out, 'tls.crt'), 'utf8'),
      Buffer.from(before.data['tls.crt'] ?? '', 'base64').toString(),
    );
  });

  void it('patches the CA bundle into every webhook and each named CRD', async () => {
    const t = io();
    const crds = 'overridepolicies.policy.flotilla.io,propagationpolicies.policy.flotilla.io';
    const code = await run(
      [
        'certs',
        'patch',
        '--secret',
        'hook-cert',
        '--namespace',
        'sys',
        '--validating',
        'flotilla',
        '--mutating',
        'flotilla',
        '--crds',
        crds,
        '--kubeconfig',
        kubeconfig,
      ],
      t,
    );
    assert.equal(code, 0, t.err());
    const ca = (api.objects.get(SECRET) as { data: Record<string, string> }).data['ca.crt'];
    for (const kind of ['validating', 'mutating']) {
      const config = api.objects.get(`/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/flotilla`) as {
        webhooks: Array<{ clientConfig: Obj }>;
      };
      assert.deepStrictEqual(
        config.webhooks.map((w) => w.clientConfig.caBundle),
        [ca, ca],
      );
      assert.equal(config.webhooks[0]?.clientConfig.service !== undefined, true, 'the service reference is kept');
    }
    for (const name of crds.split(',')) {
      const crd = api.objects.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`) as {
        spec: { conversion: { webhook: { clientConfig: Obj } } };
      };
      assert.equal(crd.spec.conversion.webhook.clientConfig.caBundle, ca);
    }
  });

  void it('fails, naming it, when a CRD has no conversion webhook, and still patches the others', async () => {
    const t = io();
    const code = await run(
      [
        'certs',
        'patch',
        '--secret',
        'hook-cert',
        '--namespace',
        'sys',
        '--crds',
        'plain.policy.flotilla.io,missing.policy.flotilla.io,overridepolicies.policy.flotilla.io',
        '--kubeconfig',
        kubeconfig,
      ],
      t,
    );
    assert.equal(code, 1);
    assert.match(t.err(), /CustomResourceDefinition plain\.policy\.flotilla\.io: has no conversion webhook to patch/);
    assert.match(t.err(), /CustomResourceDefinition missing\.policy\.flotilla\.io: HTTP 404/);
    assert.match(
      t.out(),
      /patched the conversion CA bundle of CustomResourceDefinition overridepolicies\.policy\.flotilla\.io/,
    );
  });

  void it('uses --context, with every file in $KUBECONFIG merged as kubectl merges them', async () => {
    // Listed first, so its current-context ("elsewhere", unreachable) wins unless --context says otherwise.
    const other = join(dir, 'other-kubeconfig');
    writeFileSync(
      other,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'elsewhere',
        clusters: [{ name: 'elsewhere', cluster: { server: 'http://127.0.0.1:1' } }],
        users: [{ name: 'nobody', user: {} }],
        contexts: [{ name: 'elsewhere', context: { cluster: 'elsewhere', user: 'nobody' } }],
      }),
    );
    const env = { KUBECONFIG: [join(dir, 'missing'), other, kubeconfig].join(':'), HOME: dir };
    const t = io(env);
    assert.equal(
      await run(
        [
          'certs',
          'patch',
          '--secret',
          'hook-cert',
          '--namespace',
          'sys',
          '--crds',
          'overridepolicies.policy.flotilla.io',
          '--context',
          'fake',
        ],
        t,
      ),
      0,
      t.err(),
    );
    assert.match(
      t.out(),
      /patched the conversion CA bundle of CustomResourceDefinition overridepolicies\.policy\.flotilla\.io/,
    );

    const unknown = io(env);
    assert.equal(
      await run(['certs', 'patch', '--secret', 'hook-cert', '--namespace', 'sys', '--context', 'nope'], unknown),
      1,
    );
    assert.match(
      unknown.err(),
      /^flotilla certs patch: context "nope" is not in the kubeconfig \(contexts: elsewhere, fake\)$/m,
    );
  });

  void it('says how to name a cluster when no kubeconfig applies, and exits 2', async () => {
    const t = io({ HOME: dir });
    assert.equal(await run(['certs', 'patch', '--secret', 'hook-cert', '--namespace', 'sys'], t), 2);
    assert.match(t.err(), /no cluster to talk to: pass --kubeconfig FILE or set \$KUBECONFIG/);
  });

  void it('fails when the Secret does not exist', async () => {
    const t = io();
    assert.equal(
      await run(
        ['certs', 'patch', '--secret', 'nope', '--namespace', 'sys', '--crds', '', '--kubeconfig', kubeconfig],
        t,
      ),
      1,
    );
    assert.match(t.err(), /reading Secret sys\/nope: HTTP 404/);
  });
});

void describe('flotilla certs create over a Secret that no longer serves', () => {
  const api = new FakeAPIServer();
  let dir: string;
  let kubeconfig: string;
  const PATH = '/api/v1/namespaces/sys/secrets/hook-cert';
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const store = (data: Record<string, string>) =>
    api.objects.set(PATH, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hook-cert', namespace: 'sys', resourceVersion: api.nextVersion() },
      type: 'kubernetes.io/tls',
      data: { ...data, other: b64('kept') },
    });
  const stored = () => (api.objects.get(PATH) as { data: Record<string, string> }).data;
  const storedPem = (key: string) => Buffer.from(stored()[key] ?? '', 'base64').toString();
  const serving = (opts: { service?: string; validDays?: number; now?: Date } = {}) => {
    const service = opts.service ?? 'hook';
    const ca = createCA('old-ca', { validDays: opts.validDays ?? 3650, now: opts.now });
    const names = [service, `${service}.sys`, `${service}.sys.svc`, `${service}.sys.svc.cluster.local`];
    const cert = createServingCert(ca, {
      commonName: `${service}.sys.svc`,
      dnsNames: names,
      validDays: opts.validDays ?? 3650,
      now: opts.now,
    });
    return { 'ca.crt': b64(ca.certPem), 'tls.crt': b64(cert.certPem), 'tls.key': b64(cert.keyPem) };
  };
  const create = async () => {
    const t = io();
    const code = await run(
      [
        'certs',
        'create',
        '--service',
        'hook',
        '--namespace',
        'sys',
        '--secret',
        'hook-cert',
        '--kubeconfig',
        kubeconfig,
      ],
      t,
    );
    return { code, out: t.out(), err: t.err() };
  };
  /** The Secret now holds a certificate for the Service, signed by its ca.crt, with the matching key. */
  const assertServes = () => {
    const ca = new X509Certificate(storedPem('ca.crt'));
    const cert = new X509Certificate(storedPem('tls.crt'));
    assert.ok(cert.verify(ca.publicKey), 'signed by the stored CA');
    assert.ok(cert.checkPrivateKey(createPrivateKey(storedPem('tls.key'))), 'the stored key matches');
    assert.ok((cert.subjectAltName ?? '').split(', ').includes('DNS:hook.sys.svc'));
    assert.equal(Buffer.from(stored().other ?? '', 'base64').toString(), 'kept', 'other keys of the Secret are kept');
  };

  before(async () => {
    await api.start();
    dir = mkdtempSync(join(tmpdir(), 'certs-reuse-'));
    kubeconfig = api.kubeconfig(dir);
  });
  after(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: Array<{ name: string; data: () => Record<string, string>; why: RegExp }> = [
    {
      name: 'garbage',
      data: () => ({ 'ca.crt': b64('not a certificate'), 'tls.crt': b64('junk'), 'tls.key': b64('junk') }),
      why: /tls\.crt/,
    },
    {
      name: 'no tls.key',
      data: () => {
        const d = serving();
        delete (d as Record<string, string>)['tls.key'];
        return d;
      },
      why: /tls\.key/,
    },
    {
      name: 'a certificate made for another --service',
      data: () => serving({ service: 'other' }),
      why: /hook\.sys\.svc/,
    },
    {
      name: 'an expired certificate',
      data: () => serving({ validDays: 10, now: new Date(Date.now() - 20 * 86_400_000) }),
      why: /expire/,
    },
    {
      name: 'a certificate expiring within the renewal window',
      data: () => serving({ validDays: 5 }),
      why: /renewal window/,
    },
    {
      name: 'a key of another type than the certificate',
      data: () => ({ ...serving(), 'tls.key': b64(ecKeyPem()) }),
      why: /key/,
    },
  ];
  for (const c of cases) {
    void it(`replaces a Secret holding ${c.name}, saying why, and keeps its other keys`, async () => {
      store(c.data());
      const r = await create();
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /exists but its certificate cannot be kept: /);
      assert.match(r.out, c.why);
      assert.match(r.out, /replaced the certificate in Secret sys\/hook-cert with a new CA and certificate/);
      assertServes();
    });
  }

  void it('keeps a Secret that still serves, byte for byte', async () => {
    store(serving());
    const before = structuredClone(stored());
    const r = await create();
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /exists; keeping its certificate/);
    assert.deepStrictEqual(stored(), before);
  });

  void it('starts over from a fresh read when another writer replaces the Secret first, and keeps what that writer stored', async () => {
    store({ 'ca.crt': b64('garbage') });
    const winner = serving();
    let raced = false;
    api.beforeRequest = (method) => {
      if (method === 'PUT' && !raced) {
        raced = true;
        store(winner);
      }
    };
    try {
      const r = await create();
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /was written concurrently; keeping its certificate/);
      assert.equal(stored()['tls.crt'], winner['tls.crt']);
    } finally {
      api.beforeRequest = undefined;
    }
  });

  void it('patch refuses a ca.crt that is not a CA certificate and writes no caBundle', async () => {
    store({
      'ca.crt': b64('-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n'),
      'tls.crt': b64('x'),
      'tls.key': b64('x'),
    });
    api.objects.set(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/overridepolicies.policy.flotilla.io',
      CRD('overridepolicies.policy.flotilla.io', true),
    );
    const t = io();
    const code = await run(
      [
        'certs',
        'patch',
        '--secret',
        'hook-cert',
        '--namespace',
        'sys',
        '--crds',
        'overridepolicies.policy.flotilla.io',
        '--kubeconfig',
        kubeconfig,
      ],
      t,
    );
    assert.equal(code, 1);
    assert.match(t.err(), /ca\.crt of Secret sys\/hook-cert.*; not writing it into any caBundle/);
    assert.ok(!api.requests.some((r) => r.startsWith('PATCH')), 'nothing patched');
  });
});
