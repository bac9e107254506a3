// Claims and finalizers on the hub's templates: the claiming policy recorded on the template with
// Karmada's labels and annotations (the engine reads them back, so a claim sticks until its policy goes
// or a policy preempts it), and the controller's finalizer (ownership.ts) added while the template has
// copies on the members and released once its cleanup is done. The claim record and the finalizer go in
// one metadata merge patch; an unchanged claim costs no request, a template gone meanwhile (404) is no
// error.

import {
  CLAIM_ANNOTATIONS,
  CLAIM_CPP_ID_LABEL,
  CLAIM_CPP_NAME_ANNOTATION,
  CLAIM_LABELS,
  CLAIM_PP_ID_LABEL,
  CLAIM_PP_NAME_ANNOTATION,
  CLAIM_PP_NAMESPACE_ANNOTATION,
  permanentIdOf,
} from '../engine/match.js';
import type { ObjectRef } from '../engine/types.js';
import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import { resourcePath, type Discovery } from '../kube/discovery.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import type { PolicyRef } from './binding.js';
import { FINALIZER } from './ownership.js';

export interface ClaimsOptions {
  hub: KubeClient;
  hubDiscovery: Discovery;
  /** A policy's object, for its permanent id. */
  policy(ref: PolicyRef): JsonObject | undefined;
}

export class TemplateClaims {
  /**
   * Template uid → the last patch sent and the resourceVersion of the template it was made from: until the
   * cache shows a newer one, the same patch is not sent again (its event has not arrived yet; on a busy hub
   * that takes seconds).
   */
  private readonly sent = new Map<string, { patch: string; from: string }>();

  constructor(private readonly o: ClaimsOptions) {}

  /**
   * Records policy `claim` on the template (undefined: removes the record) and, with `finalizer`, adds the
   * controller's finalizer, in one merge patch; nothing to change: no request. Whether it patched.
   */
  async record(
    ref: ObjectRef,
    template: JsonObject,
    claim: PolicyRef | undefined,
    finalizer = false,
  ): Promise<boolean> {
    const meta = isObject(template.metadata) ? template.metadata : {};
    const labels = isObject(meta.labels) ? meta.labels : {};
    const annotations = isObject(meta.annotations) ? meta.annotations : {};
    const finalizers: unknown[] = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]) : [];
    const id = claim ? permanentIdOf(this.o.policy(claim)) : undefined;
    const want: { labels: Record<string, string | null>; annotations: Record<string, string | null> } = {
      labels: Object.fromEntries(CLAIM_LABELS.map((l) => [l, null])),
      annotations: Object.fromEntries(CLAIM_ANNOTATIONS.map((a) => [a, null])),
    };
    if (claim?.kind === 'PropagationPolicy') {
      if (id) want.labels[CLAIM_PP_ID_LABEL] = id;
      want.annotations[CLAIM_PP_NAMESPACE_ANNOTATION] = claim.namespace ?? ref.namespace ?? '';
      want.annotations[CLAIM_PP_NAME_ANNOTATION] = claim.name;
    } else if (claim?.kind === 'ClusterPropagationPolicy') {
      if (id) want.labels[CLAIM_CPP_ID_LABEL] = id;
      want.annotations[CLAIM_CPP_NAME_ANNOTATION] = claim.name;
    }
    const same = (have: JsonObject, w: Record<string, string | null>) =>
      Object.entries(w).every(([k, v]) => (v === null ? !Object.hasOwn(have, k) : have[k] === v));
    const addFinalizer = finalizer && !finalizers.includes(FINALIZER);
    const claimed = same(labels, want.labels) && same(annotations, want.annotations);
    const uid = typeof meta.uid === 'string' ? meta.uid : '';
    const from = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '';
    const last = this.sent.get(uid);
    if (last && last.from !== from) this.sent.delete(uid);
    if (claimed && !addFinalizer) return false;
    const patch = { ...(claimed ? {} : want), ...(addFinalizer ? { finalizers: [...finalizers, FINALIZER] } : {}) };
    const text = JSON.stringify(patch);
    if (from !== '' && last?.from === from && last.patch === text) return true;
    await this.patchMetadata(ref, patch);
    if (from !== '') this.sent.set(uid, { patch: text, from });
    return true;
  }

  /** The template (uid) is gone from the hub, with or without the finalizer: what was last sent for it goes too. */
  forget(uid: string): void {
    this.sent.delete(uid);
  }

  /** How many templates' last patches are remembered. */
  get remembered(): number {
    return this.sent.size;
  }

  /** Removes the controller's finalizer from `template`. */
  releaseFinalizer(ref: ObjectRef, template: JsonObject): Promise<void> {
    const meta = isObject(template.metadata) ? template.metadata : {};
    const finalizers = (Array.isArray(meta.finalizers) ? meta.finalizers : []).filter((f) => f !== FINALIZER);
    // The template is going: what was last sent for it is not kept past it.
    if (typeof meta.uid === 'string') this.sent.delete(meta.uid);
    return this.patchMetadata(ref, { finalizers });
  }

  private async patchMetadata(ref: ObjectRef, metadata: JsonObject): Promise<void> {
    const info = await this.o.hubDiscovery.resolve(ref.apiVersion, ref.kind);
    const res = await this.o.hub.request({
      method: 'PATCH',
      accept: METADATA_ACCEPT,
      path: resourcePath(info, ref.namespace, ref.name),
      contentType: 'application/merge-patch+json',
      body: { metadata },
    });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
  }
}
