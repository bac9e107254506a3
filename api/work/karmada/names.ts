// Karmada's names for its work objects (pkg/util/names): the binding `<name>-<kind>` in lower case (':'
// becomes '.'), the execution space `karmada-es-<cluster>`, and the Work `<name>-<hash>` where the hash is
// FNV-32a of `<namespace>-<name>-<kind>` (`<name>-<kind>` when cluster-scoped) in lower case, its decimal
// digits encoded with apimachinery's SafeEncodeString.

import { EXECUTION_SPACE_PREFIX } from './types.js';

export function karmadaBindingName(kind: string, name: string): string {
  return `${name.replace(/:/g, '.')}-${kind}`.toLowerCase();
}

export function karmadaExecutionSpace(cluster: string): string {
  return `${EXECUTION_SPACE_PREFIX}${cluster}`;
}

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** FNV-1a, 32 bits, over the string's UTF-8 bytes. */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function karmadaWorkName(kind: string, name: string, namespace: string | undefined): string {
  const n = name.replace(/:/g, '.').toLowerCase();
  const full = (namespace ? `${namespace}-${n}-${kind}` : `${n}-${kind}`).toLowerCase();
  const digits = String(fnv32a(full));
  const encoded = [...digits].map((c) => ALPHANUMS[c.charCodeAt(0) % ALPHANUMS.length]).join('');
  return `${n}-${encoded}`;
}
