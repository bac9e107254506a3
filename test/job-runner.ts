// A stand-in for the Job controller and the kubelet, which the test apiservers do not have (test/envtest):
// runs each Job's `flotilla` container from this checkout, as the Job's ServiceAccount, and writes the
// outcome into the Job's status the way the Job controller does. So Helm's hook Jobs (and deploy/'s Jobs)
// do on a test apiserver what they do in a cluster, with the permissions the manifests grant them, and
// `helm install` stops waiting when they finish.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';

import { kubectl } from './envtest/kubectl.js';

/** The image's `flotilla` command, run from this checkout's build. */
const FLOTILLA = new URL('../cmd/flotilla/main.js', import.meta.url).pathname;

export interface JobRun {
  job: string;
  serviceAccount: string;
  args: string[];
  exitCode: number | null;
  output: string;
  /** When the run started (ms since epoch), for ordering against what existed then. */
  startedAt: number;
  /** Objects (`kind/name` as `kubectl get -o name` prints them) that existed when the run started. */
  existing: string[];
}

interface Job {
  metadata: { name: string; uid: string };
  spec: {
    backoffLimit?: number;
    template: { spec: { serviceAccountName?: string; containers: Array<{ command?: string[]; args?: string[] }> } };
  };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

export interface JobRunnerOptions {
  /** Admin kubeconfig of the cluster. */
  kubeconfig: string;
  namespace: string;
  /** Resources whose objects each run records in `existing` (`kubectl get` syntax). Default below. */
  watch?: string;
}

export class JobRunner {
  readonly runs: JobRun[] = [];
  private readonly o: Required<JobRunnerOptions>;
  private readonly dir = mkdtempSync(join(tmpdir(), 'job-runner-'));
  private readonly attempts = new Map<string, number>();
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private lastError = '';

  constructor(options: JobRunnerOptions) {
    this.o = {
      watch: 'deployments,services,validatingwebhookconfigurations,mutatingwebhookconfigurations,secrets',
      ...options,
    };
  }

  start(): void {
    this.loop ??= this.run(this.abort.signal);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The last failure to list or start Jobs, for assertion messages. */
  get error(): string {
    return this.lastError;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const list = await kubectl(this.o.kubeconfig, ['get', 'jobs', '-n', this.o.namespace, '-o', 'json']);
        if (list.status !== 0) throw new Error(list.stderr);
        for (const job of (JSON.parse(list.stdout) as { items: Job[] }).items) {
          if (
            job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
          )
            continue;
          await this.runOnce(job);
        }
      } catch (e: unknown) {
        this.lastError = e instanceof Error ? e.message : String(e);
      }
      await sleep(200);
    }
  }

  /** One attempt at a Job, as one pod: the first container's command and args. */
  private async runOnce(job: Job): Promise<void> {
    const sa = job.spec.template.spec.serviceAccountName ?? 'default';
    const container = job.spec.template.spec.containers[0];
    if (container?.command?.[0] !== 'flotilla' || container.command.length !== 1)
      throw new Error(`Job ${job.metadata.name}: only a container whose command is ["flotilla"] can be run`);
    // Until its ServiceAccount exists, a pod cannot be created: not an attempt.
    const token = await kubectl(this.o.kubeconfig, ['create', 'token', sa, '-n', this.o.namespace, '--duration=10m']);
    if (token.status !== 0)
      throw new Error(`Job ${job.metadata.name}: no token for ServiceAccount ${sa}: ${token.stderr}`);
    const kubeconfig = this.kubeconfigFor(sa, token.stdout.trim());

    const existing = await kubectl(this.o.kubeconfig, ['get', this.o.watch, '-n', this.o.namespace, '-o', 'name']);
    const args = container.args ?? [];
    const startedAt = Date.now();
    const { exitCode, output } = await runFlotilla([...args, `--kubeconfig=${kubeconfig}`]);
    this.runs.push({
      job: job.metadata.name,
      serviceAccount: sa,
      args,
      exitCode,
      output,
      startedAt,
      existing: existing.stdout.split('\n').filter(Boolean),
    });

    const attempts = (this.attempts.get(job.metadata.uid) ?? 0) + 1;
    this.attempts.set(job.metadata.uid, attempts);
    const now = new Date().toISOString();
    const cond = (type: string, reason?: string) => ({
      type,
      status: 'True',
      lastProbeTime: now,
      lastTransitionTime: now,
      ...(reason ? { reason, message: reason } : {}),
    });
    let status: object | undefined;
    // The Job controller's terminal states, with the conditions the apiserver requires before them.
    if (exitCode === 0)
      status = {
        startTime: now,
        completionTime: now,
        succeeded: 1,
        conditions: [cond('SuccessCriteriaMet'), cond('Complete')],
      };
    else if (attempts > (job.spec.backoffLimit ?? 6))
      status = {
        startTime: now,
        failed: attempts,
        conditions: [cond('FailureTarget', 'BackoffLimitExceeded'), cond('Failed', 'BackoffLimitExceeded')],
      };
    if (status) {
      const patched = await kubectl(this.o.kubeconfig, [
        'patch',
        'job',
        job.metadata.name,
        '-n',
        this.o.namespace,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
      if (patched.status !== 0) throw new Error(`Job ${job.metadata.name}: status not written: ${patched.stderr}`);
    }
  }

  /** A kubeconfig for the cluster with a ServiceAccount token as the only credential. */
  private kubeconfigFor(sa: string, token: string): string {
    const admin = new KubeConfig();
    admin.loadFromFile(this.o.kubeconfig);
    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error(`${this.o.kubeconfig} has no current cluster`);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: sa, token }],
      contexts: [{ name: sa, cluster: cluster.name, user: sa }],
      currentContext: sa,
    });
    const path = join(this.dir, `${sa}.kubeconfig`);
    writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
    return path;
  }
}

function runFlotilla(args: string[]): Promise<{ exitCode: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // No KUBECONFIG or in-cluster variables leak in: the token kubeconfig is the only way to the cluster.
    const env = { PATH: process.env.PATH ?? '', HOME: tmpdir() };
    const child = spawn(process.execPath, [FLOTILLA, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.once('error', reject);
    child.once('close', (exitCode) => resolve({ exitCode, output }));
  });
}
