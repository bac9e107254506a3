// What the binding writer hands to Karmada's objects (karmada-objects.ts) when the hub serves Karmada's
// API: each binding it writes and each one it deletes. Kept apart so binding-writer.ts names only this.

import type { JsonObject } from '../kube/objects.js';
import type { BindingContent } from './binding-writer.js';
import type { MemberReport } from './execute.js';
import type { TemplateIdentity } from './ownership.js';
import type { TemplatePlan } from './plan.js';

/** The binding writer's view of a template: its last plan and its members' reports, by template key. */
export interface BindingSource {
  plan(key: string): TemplatePlan | undefined;
  reports(key: string): ReadonlyMap<string, MemberReport> | undefined;
}

export interface KarmadaMirror {
  /** Template `t`'s binding was written (or found unchanged) with content `b`. */
  put(t: TemplateIdentity, template: JsonObject, b: BindingContent, source: BindingSource): Promise<void>;
  /** Template `t`'s binding and Works were deleted (its cleanup is done). */
  delete(t: TemplateIdentity): Promise<void>;
}
