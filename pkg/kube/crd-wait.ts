// Waiting for a CustomResourceDefinition the applier just applied to be Established, before custom
// resources of its kind are applied.

import type { Item } from './applier-types.js';
import type { KubeClient } from './client.js';
import type { Discovery, ResourceInfo } from './discovery.js';
import { UnknownKindError } from './errors.js';
import { sleep } from '../runtime/clock.js';

export const CRD_GROUP = 'apiextensions.k8s.io';

/**
 * Waits until CustomResourceDefinition `name` is Established: '' once it is, else the last reason seen
 * when `deadline` (ms since the epoch, `timeoutMs` after the wait began) passed. `checkGoing` throws to stop
 * waiting (member gone, interrupted).
 */
export async function untilEstablished(
  client: KubeClient,
  name: string,
  deadline: number,
  timeoutMs: number,
  checkGoing: () => void,
  signal: AbortSignal | undefined,
): Promise<string> {
  for (;;) {
    checkGoing();
    const res = await client.request<{
      status?: { conditions?: Array<{ type?: string; status?: string; message?: string }> };
    }>({
      method: 'GET',
      path: `/apis/${CRD_GROUP}/v1/customresourcedefinitions/${encodeURIComponent(name)}`,
    });
    let why = `HTTP ${res.status}`;
    if (res.status === 200) {
      const conditions = res.body?.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return '';
      const names = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
      why = names?.message ? `names not accepted: ${names.message}` : 'not Established yet';
    }
    if (Date.now() > deadline) return `${why} after ${timeoutMs} ms`;
    await sleep(200, signal);
  }
}

export interface SetCRDWait {
  client: KubeClient;
  discovery: Discovery;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  checkGoing: () => void;
  /** Item `i`'s kind is served now, as `info`. */
  served(i: Item, info: ResourceInfo): void;
  fail(i: Item, message: string): void;
  failThrown(i: Item, err: unknown): void;
}

/**
 * Waits for the CRDs of this set that the items deferred on (their kind is defined by a CRD in the same
 * input) to be Established and their kinds served, then hands each item its kind; an item whose CRD was not
 * applied, is not ready or whose kind is not served within the timeout fails with the reason.
 */
export async function awaitSetCRDs(items: readonly Item[], w: SetCRDWait): Promise<void> {
  const waiting = items.filter((i) => i.deferred && !i.result);
  if (waiting.length === 0) return;
  const crds = new Map<string, Item | undefined>();
  for (const i of waiting) {
    const name = i.deferred?.crd ?? '';
    crds.set(
      name,
      items.find((c) => c.group === CRD_GROUP && c.id.kind === 'CustomResourceDefinition' && c.id.name === name),
    );
  }
  const deadline = Date.now() + w.timeoutMs;
  await Promise.all(
    [...crds].map(async ([name, crd]) => {
      const mine = waiting.filter((i) => i.deferred?.crd === name);
      const action = crd?.result?.action;
      if (action !== 'created' && action !== 'configured' && action !== 'unchanged') {
        for (const i of mine) w.fail(i, `its CustomResourceDefinition ${name} was not applied`);
        return;
      }
      try {
        const why = await untilEstablished(w.client, name, deadline, w.timeoutMs, w.checkGoing, w.signal);
        if (why) {
          for (const i of mine) w.fail(i, `CustomResourceDefinition ${name} is not ready: ${why}`);
          return;
        }
        for (const i of mine) {
          const reason = await untilServed(i, deadline, w);
          if (reason) w.fail(i, `CustomResourceDefinition ${name} is Established but ${reason}`);
        }
      } catch (err: unknown) {
        for (const i of mine) w.failThrown(i, err);
      }
    }),
  );
}

/** '' once discovery serves item `i`'s kind, else why not when `deadline` passed. */
async function untilServed(i: Item, deadline: number, w: SetCRDWait): Promise<string> {
  for (;;) {
    w.checkGoing();
    w.discovery.forget(i.id.apiVersion);
    try {
      w.served(i, await w.discovery.resolve(i.id.apiVersion, i.id.kind));
      return '';
    } catch (err: unknown) {
      if (!(err instanceof UnknownKindError)) throw err;
      if (Date.now() > deadline) return err.message;
    }
    await sleep(200, w.signal);
  }
}
