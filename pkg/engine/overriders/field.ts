// fieldOverrider (Karmada overridemanager.go applyFieldOverriders): edits JSON or YAML held inside a string
// field (ConfigMap data, typically). YAML is read as Karmada reads it (sigs.k8s.io/yaml: YAML 1.1 scalars,
// so `enabled: yes` is true and `mode: 0644` is 420) and comes back with keys sorted, 2-space indent, block
// lists at the parent's indent and long lines folded at 80 columns, as sigs.k8s.io/yaml writes it; JSON
// comes back compact with key order kept.

import { readYaml, writeYaml, YamlError } from '../../yaml/index.js';
import type { FieldOverrider, PatchOperation as SubOperation } from '../../../api/policy/v1alpha1/types.js';
import { insertionTarget, stableSite } from '../additions.js';
import { arr, isObject } from '../json.js';
import { applyOperation, getValue, PatchError } from '../patch.js';
import { expand, OverrideError, write, type OverrideContext } from './context.js';

function patchDocument(
  document: unknown,
  ops: unknown[],
  ctx: OverrideContext,
  name: string,
  format: string,
  field: string,
): unknown {
  let doc = document;
  ops.forEach((raw: unknown, k: number) => {
    const op = (isObject(raw) ? raw : {}) as Partial<SubOperation>;
    try {
      const path = String(op.subPath ?? '');
      const value = expand(op.value, ctx, name);
      if (op.operator === 'add' && ctx.additions) {
        const target = insertionTarget(doc, path);
        const site = target && `${field}|${stableSite(doc, target.pointer)}`;
        if (target && site && !ctx.additions.shouldAdd(ctx, `${name}.${format}[${k}]`, site, [value], target.list))
          return;
      }
      doc = applyOperation(doc, { op: String(op.operator), path, value }).doc;
    } catch (err: unknown) {
      if (err instanceof PatchError || err instanceof OverrideError) {
        throw new OverrideError(`${name}.${format}[${k}]: ${err.message}`, { cause: err });
      }
      throw err;
    }
  });
  return doc;
}

/**
 * Writes the patched document back as text. The document came from a string in the template, so its depth
 * is not bounded by the input checks; a document too deep to write is this overrider's error.
 */
function serialize(write: () => string, name: string, fieldPath: string, format: string): string {
  try {
    return write();
  } catch (err: unknown) {
    throw new OverrideError(
      `${name}: cannot write ${fieldPath} back as ${format}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

export function applyFieldOverrider(doc: unknown, o: FieldOverrider, ctx: OverrideContext, name: string): unknown {
  const fieldPath = String(o.fieldPath ?? '');
  const got = getValue(doc, fieldPath);
  if (!got.found) throw new OverrideError(`${name}: the field ${fieldPath} does not exist on this object`);
  if (typeof got.value !== 'string')
    throw new OverrideError(`${name}: Get object's value by overrider's path(${fieldPath}) is not string`);
  const yamlOps = arr(o.yaml) ?? [];
  const jsonOps = arr(o.json) ?? [];
  let text: string;
  if (yamlOps.length > 0) {
    let parsed: unknown;
    try {
      parsed = readYaml(got.value);
    } catch (err: unknown) {
      if (!(err instanceof YamlError)) throw err;
      throw new OverrideError(`${name}: ${fieldPath} does not hold valid YAML: ${err.message}`, { cause: err });
    }
    const patched = patchDocument(parsed ?? null, yamlOps, ctx, name, 'yaml', stableSite(doc, got.pointer));
    text = serialize(() => writeYaml(patched, { sortKeys: true, lineWidth: 80 }), name, fieldPath, 'YAML');
  } else if (jsonOps.length > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(got.value);
    } catch (err: unknown) {
      throw new OverrideError(
        `${name}: ${fieldPath} does not hold valid JSON: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    const patched = patchDocument(parsed, jsonOps, ctx, name, 'json', stableSite(doc, got.pointer));
    text = serialize(() => JSON.stringify(patched), name, fieldPath, 'JSON');
  } else {
    text = '';
  }
  return write(doc, { op: 'replace', path: got.pointer, value: text }, ctx, name);
}
