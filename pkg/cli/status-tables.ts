// `flotilla status` as kubectl-style tables: upper-case headers, columns padded to the widest cell and
// separated by three spaces, `<none>`/`-` for nothing, ages as kubectl prints them (45s, 12m, 3h, 2d).
// Pure: the views come from pkg/fleet, `now` from the caller. Text from the hub (names, label values,
// messages) is hostile input: control characters are shown escaped, never sent to the terminal.

import type {
  ClusterFact,
  EventFact,
  PlacementCell,
  PlacementMatrix,
  PolicyFact,
  TemplateDetail,
} from '../fleet/types.js';

/** A cell's text with C0/C1 control characters (escape sequences, newlines) shown as \xNN. */
export function safe(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cells = [header, ...rows].map((r) => r.map((c) => safe(c)));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('   ')
        .trimEnd(),
    )
    .map((l) => `${l}\n`)
    .join('');
}

/** kubectl's short age: 45s, 12m, 3h, 2d (the largest whole unit). */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

const since = (time: string | undefined, now: number): string => {
  const t = time === undefined ? NaN : Date.parse(time);
  return Number.isFinite(t) ? age(now - t) : '-';
};

function capacityCell(c: ClusterFact, resource: string): string {
  const r = c.capacity.find((x) => x.resource === resource);
  if (!r) return '-';
  return `${r.text.allocated ?? '0'}/${r.text.allocatable ?? '0'}`;
}

export function clustersTable(clusters: readonly ClusterFact[], now: number, wide: boolean): string {
  const header = ['NAME', 'VERSION', 'MODE', 'READY', 'LEASE', 'TAINTS', 'CPU', 'MEMORY', 'PODS', 'APIS', 'AGE'];
  if (wide) header.push('REGION', 'ZONES', 'MESSAGE');
  const rows = clusters.map((c) => {
    const lease = c.lease
      ? c.lease.ageSeconds === undefined
        ? 'none'
        : `${age(c.lease.ageSeconds * 1000)}${c.lease.expired ? ' (expired)' : ''}`
      : '-';
    const taints =
      c.taints.length === 0
        ? '<none>'
        : c.taints.map((t) => `${t.key}:${t.effect}${t.timeAdded ? `(${since(t.timeAdded, now)})` : ''}`).join(',');
    const row = [
      c.name,
      c.kubernetesVersion ?? '-',
      c.syncMode,
      c.ready,
      lease,
      taints,
      capacityCell(c, 'cpu'),
      capacityCell(c, 'memory'),
      capacityCell(c, 'pods'),
      c.apiGroups > 0 ? String(c.apiGroups) : '-',
      since(c.createdAt, now),
    ];
    if (wide)
      row.push(
        c.region ?? '-',
        c.zones.join(',') || '-',
        [c.readyMessage, ...c.notActedUpon].filter(Boolean).join('; ') || '-',
      );
    return row;
  });
  return table(header, rows);
}

function cellText(cell: PlacementCell | undefined): string {
  if (!cell) return '-';
  const state = cell.state === 'Applied' && cell.requiredBy ? 'RequiredBy' : cell.state;
  return cell.replicas === undefined ? state : `${state}:${cell.replicas}`;
}

/** What a cell needs said beyond its state: who else wrote it, when an evicted copy goes, what failed. */
export function cellNote(cell: PlacementCell): string | undefined {
  switch (cell.state) {
    case 'Conflict':
      return `${cell.cluster}: Conflict with ${cell.conflictWith ?? (cell.message || 'another writer')}`;
    case 'Evicting': {
      const e = cell.evicting;
      const until = e?.deadline ? ` until ${e.deadline}` : e?.purgeMode === 'Never' ? ' until placed there again' : '';
      return `${cell.cluster}: Evicting (${e?.purgeMode ?? 'Gracefully'}${e?.reason ? `, ${e.reason}` : ''})${until}`;
    }
    case 'Applied':
      return cell.health && cell.health !== 'Healthy'
        ? `${cell.cluster}: ${cell.health}${cell.healthMessage ? ` (${cell.healthMessage})` : ''}`
        : undefined;
    case 'Pending':
      return cell.message ? `${cell.cluster}: Pending: ${cell.message}` : undefined;
    default:
      return `${cell.cluster}: ${cell.state}${cell.message ? `: ${cell.message}` : ''}`;
  }
}

const MAX_NOTE = 200;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function matrixTable(m: PlacementMatrix, clusters: readonly string[], wide: boolean): string {
  const header = ['NAMESPACE', 'KIND', 'NAME', 'POLICY', 'APPLIED', 'READY', ...clusters.map((c) => c.toUpperCase())];
  header.push('NOTES');
  const rows = m.rows.map((r) => {
    const cells = new Map(r.cells.map((c) => [c.cluster, c]));
    const notes = r.cells
      .filter((c) => clusters.includes(c.cluster))
      .map(cellNote)
      .filter((n): n is string => n !== undefined);
    const policy = r.policy ? (r.policy.namespace ? r.policy.name : `${r.policy.kind}/${r.policy.name}`) : '<none>';
    const noteText = notes.join('; ') || '-';
    return [
      r.template.namespace ?? '-',
      r.template.kind,
      r.template.name,
      policy,
      r.applied,
      r.ready,
      ...clusters.map((c) => cellText(cells.get(c))),
      wide ? noteText : cut(noteText, MAX_NOTE),
    ];
  });
  return table(header, rows);
}

export function policiesTable(policies: readonly PolicyFact[], wide: boolean): string {
  const header = ['KIND', 'NAMESPACE', 'NAME', 'GROUP', 'TEMPLATES', 'BINDINGS', 'READY', 'NOT-ACTED-UPON'];
  if (wide) header.push('SELECTS', 'MESSAGE');
  return table(
    header,
    policies.map((p) => {
      const row = [
        p.kind,
        p.namespace ?? '-',
        p.name,
        p.apiVersion.split('/')[0] ?? '',
        p.templates === undefined ? '-' : String(p.templates),
        p.role === 'propagation' ? String(p.bindings) : '-',
        p.ready,
        p.notActedUpon.map((w) => w.split(' ')[0]).join(',') || '<none>',
      ];
      if (wide)
        row.push(
          p.selects.join('; ') || '-',
          [p.readyMessage, ...p.errors.map((e) => `denied: ${e}`), ...p.warnings].filter(Boolean).join('; ') || '-',
        );
      return row;
    }),
  );
}

const json = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));

/** `flotilla status template NAME`, as kubectl describe lays an object out. */
export function templateText(d: TemplateDetail, events: readonly EventFact[], now: number): string {
  const ref = d.template;
  const lines: string[] = [];
  const field = (k: string, v: string) => lines.push(`${`${k}:`.padEnd(13)}${safe(v)}`);
  const describe = (r: { kind: string; namespace?: string; name: string }) =>
    `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
  field('Template', `${describe(ref)} (${ref.apiVersion})`);
  field('Binding', d.row?.binding ?? '<none>');
  field('Policy', d.policy ? describe(d.policy) : '<none>');
  if (d.requiredBy) field('Required by', d.requiredBy.map(describe).join(', '));
  field('Overrides', d.overrides.map(describe).join(', ') || '<none>');
  if (d.row) field('Applied', `${d.row.applied}   Ready: ${d.row.ready}`);
  if (d.row?.conflictResolution) field('Conflicts', d.row.conflictResolution);
  lines.push('Clusters:');
  const rows = d.clusters.map((c) => [
    c.cluster,
    c.chosen ? 'yes' : 'no',
    c.cell?.state ?? (c.chosen ? 'Pending' : '-'),
    c.cell?.replicas === undefined ? '-' : String(c.cell.replicas),
    c.cell?.health ?? '-',
    (c.cell ? cellNote(c.cell)?.replace(`${c.cluster}: `, '') : undefined) ?? (c.chosen ? '' : (c.reason ?? '')),
  ]);
  lines.push(
    ...table(['CLUSTER', 'CHOSEN', 'STATE', 'REPLICAS', 'HEALTH', 'WHY / NOTE'], rows)
      .trimEnd()
      .split('\n')
      .map((l) => `  ${l}`),
  );
  for (const c of d.clusters.filter((x) => x.chosen)) {
    lines.push(`Copy on ${safe(c.cluster)} (against the template):`);
    if (c.changes.length === 0) lines.push('  no field changed');
    for (const ch of c.changes) {
      const value =
        ch.op === 'remove'
          ? `${json(ch.before)} removed`
          : ch.op === 'add'
            ? `${json(ch.after)} added`
            : `${json(ch.before)} -> ${json(ch.after)}`;
      lines.push(`  ${safe(ch.path)}: ${safe(value)}${ch.setBy ? `   # ${safe(ch.setBy)}` : ''}`);
    }
  }
  const notChosen = d.clusters.filter((c) => !c.chosen && c.reason);
  lines.push('Explanation:');
  for (const c of d.clusters.filter((x) => x.chosen && x.explanation))
    for (const l of (c.explanation ?? '').trimEnd().split('\n')) lines.push(`  ${safe(l)}`);
  for (const c of notChosen) lines.push(`  # not on ${safe(c.cluster)}: ${safe(c.reason ?? '')}`);
  if (d.errors.length > 0) {
    lines.push('Errors:');
    for (const e of d.errors) lines.push(`  ${safe(e)}`);
  }
  if (events.length === 0) lines.push('Events:      <none>');
  else {
    lines.push('Events:');
    const eventRows = events.map((e) => [
      since(e.lastTime ?? e.firstTime, now),
      e.type,
      e.reason,
      e.count > 1 ? `${e.message} (x${e.count})` : e.message,
    ]);
    lines.push(
      ...table(['LAST SEEN', 'TYPE', 'REASON', 'MESSAGE'], eventRows)
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  }
  return `${lines.join('\n')}\n`;
}
