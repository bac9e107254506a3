// Makes sure a test run leaves no environment processes or directories behind, however it ends:
//  - normal end: the test calls stop();
//  - SIGINT/SIGTERM: every live environment is stopped, then the signal is raised again so the process
//    ends the way it would have without us;
//  - process exit with environments still live (a test forgot stop(), or an uncaught error): their
//    process groups are SIGKILLed and their directories removed synchronously in the 'exit' event;
//  - SIGKILL of the test process, which runs no handler at all: a watchdog shell, started per
//    environment in its own process group, notices that the test process is gone and does the same.

import { spawn } from 'node:child_process';

import { killGroup } from './process.js';

export interface Cleanable {
  /** Graceful, asynchronous stop (SIGTERM, grace period, SIGKILL, remove the directory). */
  stop(): Promise<void>;
  /** Immediate, synchronous stop for the 'exit' event: SIGKILL and remove the directory. */
  killNow(): void;
}

const live = new Set<Cleanable>();
const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
let installed = false;

export function track(env: Cleanable): void {
  live.add(env);
  if (!installed) {
    installed = true;
    process.on('exit', onExit);
    for (const s of signals) process.on(s, onSignal);
  }
}

export function untrack(env: Cleanable): void {
  live.delete(env);
  if (live.size === 0) uninstall();
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off('exit', onExit);
  for (const s of signals) process.off(s, onSignal);
}

function onExit(): void {
  for (const env of [...live]) env.killNow();
}

function onSignal(signal: NodeJS.Signals): void {
  const envs = [...live];
  // Our listeners go first, so a second Ctrl-C falls back to Node's default and ends the process at once;
  // the watchdog then kills what is left.
  for (const s of signals) process.off(s, onSignal);
  void Promise.allSettled(envs.map((e) => e.stop())).then(() => {
    uninstall();
    // With no other listener, re-raising gives the default action: the process ends by this signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

// The watchdog polls the test process once a second; when it is gone, it SIGKILLs every process group
// listed in the pgid file and removes the environment directory. Its argv carries no secret.
const WATCHDOG = `
parent="$1"; dir="$2"; pgids="$3"
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
if [ -f "$pgids" ]; then
  while read -r g; do [ -n "$g" ] && kill -KILL -- "-$g" 2>/dev/null; done < "$pgids"
fi
case "$dir" in */flotilla-envtest-*) rm -rf -- "$dir" ;; esac
`;

export interface Watchdog {
  pid: number;
  /** Resolves once the watchdog has exited and been reaped. */
  exited: Promise<void>;
  /** Lets the watchdog keep the event loop alive again (while we wait for its exit). */
  ref(): void;
}

/**
 * Starts the watchdog for an environment whose directory is `dir` and whose process groups are listed,
 * one per line, in `pgidFile`. Its pid is also its process group.
 */
export function startWatchdog(dir: string, pgidFile: string): Watchdog {
  const child = spawn('bash', ['-c', WATCHDOG, 'flotilla-envtest-watchdog', String(process.pid), dir, pgidFile], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  return { pid: child.pid ?? -1, exited, ref: () => child.ref() };
}

/** SIGKILLs the watchdog's process group (it holds no state worth a graceful stop). */
export function stopWatchdog(w: Watchdog): Promise<void> {
  w.ref();
  killGroup(w.pid, 'SIGKILL');
  return w.exited;
}
