// Server-side applies on the hub that cost no request when unchanged: the digest of the body last
// written at each place (a binding, its status, a replica's entries of it, a pull cluster's Work) is kept,
// and a body with the same digest is not sent again. A `#part` suffix names a second writer of one path.

import { createHash } from 'node:crypto';

import { apiError, type KubeClient } from '../kube/client.js';
import { serverSideApply } from '../kube/delivery.js';
import type { JsonObject } from '../kube/objects.js';

export class HubApplies {
  /** Place → the digest of the body last written there. */
  private readonly written = new Map<string, string>();

  constructor(private readonly hub: KubeClient) {}

  /** One server-side apply at `at`, skipped when unchanged. */
  async apply(at: string, body: JsonObject, fieldManager: string): Promise<void> {
    // A digest, not the text: one is kept per binding and per pull cluster's Work.
    const text = createHash('sha256').update(JSON.stringify(body)).digest('base64');
    if (this.written.get(at) === text) return;
    this.written.delete(at);
    const res = await serverSideApply(this.hub, at.replace(/#.*$/, ''), body, { fieldManager, force: true });
    // A binding the coordinator has not written yet: the entries come with the next report.
    if (res.status === 404 && at.endsWith('#entries')) return;
    if (res.status >= 400) throw apiError(res);
    this.written.set(at, text);
  }

  /** Whether something was written at `at` (and not forgotten since). */
  has(at: string): boolean {
    return this.written.has(at);
  }

  /** The next apply at each of these places is sent whatever it holds. */
  forget(...at: string[]): void {
    for (const a of at) this.written.delete(a);
  }
}
