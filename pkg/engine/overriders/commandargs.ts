// commandOverrider / argsOverrider (Karmada commandargsoverride.go): for every container named
// `containerName` in the known workload kinds, `add` appends the values and `remove` drops every element
// equal to one of them. An absent field is written with `add` (so `remove` on it leaves `[]`, as Karmada).

import type { CommandArgsOverrider } from '../../../api/policy/v1alpha1/types.js';
import { isObject, stringList } from '../json.js';
import { getValue } from '../patch.js';
import { containerListPaths, expand, record, type OverrideContext } from './context.js';

export function applyCommandArgsOverrider(
  doc: unknown,
  o: CommandArgsOverrider,
  field: 'command' | 'args',
  ctx: OverrideContext,
  name: string,
  kind: string,
): unknown {
  const values = expand(stringList(o.value), ctx, name);
  const out = doc;
  for (const listPath of containerListPaths(kind, false)) {
    const list = getValue(out, listPath);
    if (!list.found || !Array.isArray(list.value)) continue;
    list.value.forEach((c: unknown, i: number) => {
      if (!isObject(c) || c.name !== o.containerName) return;
      const present = Object.prototype.hasOwnProperty.call(c, field) && c[field] !== null && c[field] !== undefined;
      const current = present && Array.isArray(c[field]) ? (c[field] as unknown[]).map((x) => String(x)) : [];
      if (
        o.operator === 'add' &&
        ctx.additions &&
        !ctx.additions.shouldAdd(
          ctx,
          name,
          `${list.pointer}/[name=${JSON.stringify(o.containerName)}]/${field}`,
          values,
          c[field],
        )
      )
        return;
      let next: string[];
      if (o.operator === 'add') next = [...current, ...values];
      else if (o.operator === 'remove') next = current.filter((x) => !values.includes(x));
      else next = current;
      c[field] = next;
      record(ctx, present ? 'replace' : 'add', () => `${list.pointer}/${i}/${field}`, name);
    });
  }
  return out;
}
