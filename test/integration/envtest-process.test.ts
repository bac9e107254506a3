// The process primitives under the test environment, exercised with small stand-in processes (bash,
// node) instead of etcd and kube-apiserver: group kill, SIGKILL escalation, readiness, and the retry when
// a chosen port is taken before the process binds it.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { EnvtestError, ManagedProcess, freePort, retryOnPortInUse, sleep, waitUntilReady } from '../envtest/process.js';
import { eventually, isEmpty } from '../eventually.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-envtest-process-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Pids of live (non-zombie) processes in process group `pgid`. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after "(comm)": state, ppid, pgrp, ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return members;
}

function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** A node process that listens on `port` and prints "listening", or dies with EADDRINUSE. */
function startListener(port: number, log: string): Promise<ManagedProcess> {
  const script = `require('net').createServer().listen(${port}, '127.0.0.1', () => console.log('listening'))`;
  return ManagedProcess.start('listener', process.execPath, ['-e', script], log);
}

void describe('ManagedProcess', () => {
  void it('stops the whole process group, grandchildren included', async () => {
    const p = await ManagedProcess.start(
      'group',
      'bash',
      ['-c', 'sleep 300 & sleep 300 & wait'],
      join(dir, 'group.log'),
    );
    for (let i = 0; i < 250 && groupMembers(p.pid).length < 3; i++) await sleep(20);
    assert.equal(groupMembers(p.pid).length, 3, 'bash and two sleeps');
    await p.stop(5000);
    assert.equal(p.exitStatus?.signal, 'SIGTERM');
    // The leader is reaped first; its children may still be exiting when stop() returns.
    assert.deepEqual(await eventually(() => groupMembers(p.pid), isEmpty, 10_000), []);
  });

  void it('escalates to SIGKILL when the group ignores SIGTERM for the grace period', async () => {
    const log = join(dir, 'stubborn.log');
    const p = await ManagedProcess.start(
      'stubborn',
      'bash',
      ['-c', "trap '' TERM; echo trap-$((1+1)); sleep 300 & wait"],
      log,
    );
    // Wait until bash has installed the trap (a loaded machine can take longer than any fixed sleep); the
    // marker is computed so the command line the log starts with does not already contain it.
    for (let i = 0; i < 250 && !readFileSync(log, 'utf8').includes('trap-2'); i++) await sleep(20);
    const began = Date.now();
    await p.stop(400);
    assert.ok(Date.now() - began >= 400, 'waited the grace period first');
    assert.equal(p.exitStatus?.signal, 'SIGKILL');
    assert.deepEqual(await eventually(() => groupMembers(p.pid), isEmpty, 10_000), []);
  });

  void it('appends each start to the log and reports only the latest in its tail', async () => {
    const log = join(dir, 'twice.log');
    const first = await ManagedProcess.start('echo', 'bash', ['-c', 'echo first-run'], log);
    await first.waitForExit();
    const second = await ManagedProcess.start('echo', 'bash', ['-c', 'echo second-run'], log);
    await second.waitForExit();
    assert.match(readFileSync(log, 'utf8'), /first-run[\s\S]*second-run/);
    assert.equal(second.logTail().trim(), 'second-run');
  });
});

void describe('waitUntilReady', () => {
  void it('fails with PROCESS_EXITED and the log tail when the process dies first', async () => {
    const p = await ManagedProcess.start(
      'dies',
      'bash',
      ['-c', 'echo cannot start: bad flag; exit 3'],
      join(dir, 'dies.log'),
    );
    await assert.rejects(
      waitUntilReady(p, () => Promise.resolve(false), 10_000),
      (err: unknown) =>
        err instanceof EnvtestError &&
        err.code === 'PROCESS_EXITED' &&
        /code 3[\s\S]*cannot start: bad flag/.test(err.message),
    );
  });

  void it('fails with START_TIMEOUT when the process never becomes ready', async () => {
    const p = await ManagedProcess.start('idle', 'sleep', ['300'], join(dir, 'idle.log'));
    try {
      await assert.rejects(
        waitUntilReady(p, () => Promise.resolve(false), 300),
        (err: unknown) => err instanceof EnvtestError && err.code === 'START_TIMEOUT',
      );
    } finally {
      await p.stop(1000);
    }
  });

  void it('treats a readiness probe that throws as not ready yet', async () => {
    const p = await ManagedProcess.start('idle', 'sleep', ['300'], join(dir, 'probe.log'));
    let calls = 0;
    try {
      await waitUntilReady(
        p,
        () => (++calls < 3 ? Promise.reject(new Error('connection refused')) : Promise.resolve(true)),
        10_000,
      );
      assert.equal(calls, 3);
    } finally {
      await p.stop(1000);
    }
  });
});

void describe('starting on a port someone else took', () => {
  void it('retries with a new port when the first one turns out to be in use', async () => {
    const taken = await freePort();
    const squatter = await listenOn(taken);
    const log = join(dir, 'retry.log');
    const ports: number[] = [];
    const retries: number[] = [];
    let listener: ManagedProcess | undefined;
    try {
      await retryOnPortInUse(
        5,
        (n) => retries.push(n),
        async () => {
          const port = ports.length === 0 ? taken : await freePort();
          ports.push(port);
          listener = await startListener(port, log);
          const p = listener;
          await waitUntilReady(p, () => Promise.resolve(p.logTail().includes('listening')), 10_000);
        },
      );
      assert.equal(ports.length, 2);
      assert.notEqual(ports[1], taken);
      assert.deepEqual(retries, [2]);
      assert.match(readFileSync(log, 'utf8'), /address already in use/);
    } finally {
      await listener?.stop(1000);
      squatter.close();
    }
  });

  void it('gives up after the given number of attempts', async () => {
    const taken = await freePort();
    const squatter = await listenOn(taken);
    let attempts = 0;
    try {
      await assert.rejects(
        retryOnPortInUse(
          3,
          () => undefined,
          async () => {
            attempts++;
            const p = await startListener(taken, join(dir, 'give-up.log'));
            await waitUntilReady(p, () => Promise.resolve(p.logTail().includes('listening')), 10_000);
          },
        ),
        (err: unknown) => err instanceof EnvtestError && err.code === 'PORT_IN_USE',
      );
      assert.equal(attempts, 3);
    } finally {
      squatter.close();
    }
  });

  void it('does not retry a failure that has nothing to do with the port', async () => {
    let attempts = 0;
    await assert.rejects(
      retryOnPortInUse(
        5,
        () => undefined,
        async () => {
          attempts++;
          const p = await ManagedProcess.start(
            'dies',
            'bash',
            ['-c', 'echo no such file; exit 1'],
            join(dir, 'other.log'),
          );
          await waitUntilReady(p, () => Promise.resolve(false), 10_000);
        },
      ),
      (err: unknown) => err instanceof EnvtestError && err.code === 'PROCESS_EXITED',
    );
    assert.equal(attempts, 1);
  });

  void it('never hands out the same port twice in one process', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    assert.equal(new Set(ports).size, 20);
  });
});
