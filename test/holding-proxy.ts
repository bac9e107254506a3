// An HTTPS proxy in front of an envtest apiserver that can hold chosen requests: the proxy ends TLS with
// its own certificate (a kubeconfig it writes trusts it) and forwards each request with the credentials of
// the cluster's kubeconfig. hold(test) keeps every matching request waiting, unanswered, until release();
// the others pass at once, watches streaming as they come. For tests of what a process does while one
// list is slow (one informer synced, another not yet).

import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse, stringify } from 'yaml';

import { createCA, createServingCert } from '../pkg/certs/index.js';

type Held = () => void;

export class HoldingProxy {
  private readonly server: Server;
  private readonly target: URL;
  private readonly credentials: { ca: string; cert: string; key: string };
  private readonly caPem: string;
  private test: ((method: string, url: URL) => boolean) | undefined;
  private readonly waiting: Held[] = [];
  /** Every request seen, as `METHOD path?query`, in order. */
  readonly seen: string[] = [];
  private port = 0;

  private constructor(kubeconfigPath: string) {
    const kc = parse(readFileSync(kubeconfigPath, 'utf8')) as {
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
      users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
    };
    const cluster = kc.clusters[0]!.cluster;
    const user = kc.users[0]!.user;
    const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
    this.target = new URL(cluster.server);
    this.credentials = {
      ca: b64(cluster['certificate-authority-data']),
      cert: b64(user['client-certificate-data']),
      key: b64(user['client-key-data']),
    };
    const ca = createCA('flotilla-test-holding-proxy', { validDays: 1 });
    const serving = createServingCert(ca, { commonName: 'holding-proxy', ipAddresses: ['127.0.0.1'], validDays: 1 });
    this.caPem = ca.certPem;
    this.server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => this.accept(req, res));
  }

  /** Listens on 127.0.0.1 (a free port) in front of the cluster of `kubeconfigPath` (its first entry). */
  static async start(kubeconfigPath: string): Promise<HoldingProxy> {
    const p = new HoldingProxy(kubeconfigPath);
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve));
    p.port = (p.server.address() as AddressInfo).port;
    return p;
  }

  /** Writes a kubeconfig that reaches the cluster through this proxy (no client credentials needed). */
  writeKubeconfig(path: string, contextName = 'hub'): void {
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': contextName,
      clusters: [
        {
          name: contextName,
          cluster: {
            server: `https://127.0.0.1:${this.port}`,
            'certificate-authority-data': Buffer.from(this.caPem).toString('base64'),
          },
        },
      ],
      users: [{ name: `${contextName}-proxy`, user: { token: 'unused' } }],
      contexts: [{ name: contextName, context: { cluster: contextName, user: `${contextName}-proxy` } }],
    };
    writeFileSync(path, stringify(config), { mode: 0o600 });
  }

  /** From now on, requests for which `test` is true wait until release(). */
  hold(test: (method: string, url: URL) => boolean): void {
    this.test = test;
  }

  /** Lets every waiting request through and holds nothing more. */
  release(): void {
    this.test = undefined;
    for (const go of this.waiting.splice(0)) go();
  }

  /** How many requests are waiting now. */
  get held(): number {
    return this.waiting.length;
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.target);
    this.seen.push(`${req.method} ${url.pathname}${url.search}`);
    const forward = () => {
      const { authorization: _a, host: _h, ...headers } = req.headers;
      const out = request(
        {
          host: this.target.hostname,
          port: this.target.port,
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers,
          ...this.credentials,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(String(err));
      });
      res.on('close', () => out.destroy());
      req.pipe(out);
    };
    if (this.test?.(req.method ?? 'GET', url)) this.waiting.push(forward);
    else forward();
  }
}
