// Child processes of the test environment: each runs detached in its own process group, with stdout and
// stderr appended to a log file, and is stopped by signalling the whole group.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';

export type EnvtestErrorCode =
  'BUILD_FAILED' | 'PORT_IN_USE' | 'PROCESS_EXITED' | 'START_TIMEOUT' | 'APPLY_FAILED' | 'CRD_TIMEOUT';

export class EnvtestError extends Error {
  readonly code: EnvtestErrorCode;
  constructor(code: EnvtestErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EnvtestError';
    this.code = code;
  }
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Where this start's output begins in the log (earlier attempts come before it). */
  private readonly logOffset: number;
  private readonly exited: Promise<ExitStatus>;
  private status: ExitStatus | undefined;
  private readonly child: ChildProcess;

  private constructor(
    child: ChildProcess,
    name: string,
    logPath: string,
    logOffset: number,
    exited: Promise<ExitStatus>,
  ) {
    this.child = child;
    this.name = name;
    this.pid = child.pid ?? -1;
    this.logPath = logPath;
    this.logOffset = logOffset;
    this.exited = exited.then((s) => (this.status = s));
  }

  /**
   * Starts `bin args…` as the leader of a new process group. Output is appended to `logPath`, after a
   * header line, so a retried start keeps the earlier attempt's output. The child is unref'd: it does
   * not keep the test process alive, and the exit hook in cleanup.ts kills it if nothing else does.
   */
  static start(
    name: string,
    bin: string,
    args: string[],
    logPath: string,
    env?: NodeJS.ProcessEnv,
  ): Promise<ManagedProcess> {
    const fd = openSync(logPath, 'a');
    try {
      writeSync(fd, `--- ${new Date().toISOString()} ${bin} ${args.join(' ')}\n`);
      const offset = fstatSync(fd).size;
      const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd], env: env ?? process.env });
      child.unref();
      const exited = new Promise<ExitStatus>((resolve) => {
        child.once('exit', (code, signal) => resolve({ code, signal }));
      });
      return new Promise((resolve, reject) => {
        child.once('error', (err) =>
          reject(new EnvtestError('PROCESS_EXITED', `${name}: cannot run ${bin}`, { cause: err })),
        );
        child.once('spawn', () => resolve(new ManagedProcess(child, name, logPath, offset, exited)));
      });
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Resolves when the process has exited; never rejects. Until then the child counts as a handle that
   * keeps the event loop alive.
   */
  waitForExit(): Promise<ExitStatus> {
    this.child.ref();
    return this.exited;
  }

  /** Undefined while the process runs. */
  get exitStatus(): ExitStatus | undefined {
    return this.status;
  }

  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once the leader has exited. */
  async stop(graceMs: number): Promise<void> {
    // Once the leader is reaped its pid may be reused, so an exited process is never signalled again.
    if (this.status) return;
    const exited = this.waitForExit();
    killGroup(this.pid, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    });
    const late = await Promise.race([exited.then(() => false), timedOut]);
    clearTimeout(timer);
    killGroup(this.pid, 'SIGKILL');
    if (late) await exited;
  }

  /** The last `maxBytes` of what this start wrote to the log, for error messages. */
  logTail(maxBytes = 4000): string {
    try {
      const text = readFileSync(this.logPath).subarray(this.logOffset).toString('utf8');
      return text.length > maxBytes ? `…${text.slice(-maxBytes)}` : text;
    } catch {
      return '';
    }
  }
}

/** Signals every process in the group led by `pid`; a group that is already gone is not an error. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch (err: unknown) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** True when a process with this pid exists (signal 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err: unknown) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const handedOut = new Set<number>();

/**
 * A port that was free a moment ago on 127.0.0.1. Another process can still take it before ours binds
 * it; callers detect that from the log (see `isBindFailure`) and start again with a new port. Ports are
 * never handed out twice by this process, so parallel starts do not race each other.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        const p = typeof address === 'object' && address !== null ? address.port : 0;
        server.close(() => resolve(p));
      });
    });
    if (port > 0 && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** etcd and kube-apiserver both report a taken port with Go's "bind: address already in use". */
export function isBindFailure(log: string): boolean {
  return /address already in use/i.test(log);
}

/**
 * Polls `ready` every 250 ms until it resolves true. Fails with PORT_IN_USE or PROCESS_EXITED (carrying
 * the log tail) when the process exits first, with START_TIMEOUT after `timeoutMs`, and with
 * PROCESS_EXITED when `cancelled()` turns true. A `ready` that throws counts as not ready yet.
 */
export async function waitUntilReady(
  p: ManagedProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
  cancelled: () => boolean = () => false,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p.exitStatus) {
      const tail = p.logTail();
      const how = p.exitStatus.signal ?? `code ${p.exitStatus.code}`;
      throw new EnvtestError(
        isBindFailure(tail) ? 'PORT_IN_USE' : 'PROCESS_EXITED',
        `${p.name} exited (${how}) before it was ready; log ${p.logPath}:\n${tail}`,
      );
    }
    if (cancelled())
      throw new EnvtestError('PROCESS_EXITED', `${p.name}: start cancelled, the environment is stopping`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new EnvtestError(
        'START_TIMEOUT',
        `${p.name} not ready after ${timeoutMs} ms; log ${p.logPath}:\n${p.logTail()}`,
      );
    }
    await sleep(250);
  }
}

/**
 * Runs `attempt` up to `attempts` times, again only after it failed with PORT_IN_USE: the port chosen
 * by freePort() was taken by someone else before the process could bind it. `onRetry` gets the number
 * of the attempt about to start.
 */
export async function retryOnPortInUse<T>(
  attempts: number,
  onRetry: (next: number) => void,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err: unknown) {
      if (!(err instanceof EnvtestError) || err.code !== 'PORT_IN_USE' || i >= attempts) throw err;
      onRetry(i + 1);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
