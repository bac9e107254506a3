// The help texts say things about the code: which field manager a command writes with, which flags exist,
// what the defaults are, which names it uses (Lease namespace, taint keys, execution namespaces). Each is
// checked here against the code itself, for every command that has flags, so the help cannot drift.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  agentFieldManager,
  CONTROLLER_DEFAULTS,
  CONTROLLER_FIELD_MANAGER,
  DEFAULT_LEASE_NAMESPACE,
  executionSpace,
  NOT_READY_TAINT,
  UNREACHABLE_TAINT,
} from '../controller/index.js';
import type { CommandSpec } from './command.js';
import { AGENT_FLAGS } from './agent-command.js';
import { ROOT } from './commands.js';
import { CONTROLLER_FLAGS } from './controller-command.js';
import { FIELD_MANAGER } from './delivery.js';
import { parseDuration } from './duration.js';
import { STATE_FILTERS } from '../fleet/types.js';
import { STATUS_CLUSTERS_FLAGS } from './status-command.js';
import { commandHelp } from './help.js';

/** Every command under `spec`, with its path (`['flotilla', 'certs', 'create']`). */
function commands(spec: CommandSpec, path: string[] = [spec.name]): Array<{ path: string[]; spec: CommandSpec }> {
  return [{ path, spec }, ...(spec.subcommands ?? []).flatMap((c) => commands(c, [...path, c.name]))];
}

const ALL = commands(ROOT);
const WITH_FLAGS = ALL.filter((c) => Object.keys(c.spec.flags).length > 0);
const byPath = (path: string): CommandSpec | undefined => ALL.find((c) => c.path.join(' ') === path)?.spec;

/** The prose of a command's help: description, footer and every flag's help. */
function prose(spec: CommandSpec): string {
  return [spec.description ?? '', spec.footer ?? '', ...Object.values(spec.flags).map((f) => f.help)].join('\n');
}

/**
 * The `--flag`s a text mentions, each with the command it belongs to: `flotilla X Y --f` is X Y's, a
 * flag after `kubectl` or `helm` on the same line is theirs (left out), any other is the command's own.
 */
function mentionedFlags(text: string, own: string): Array<{ command: string; flag: string }> {
  const out: Array<{ command: string; flag: string }> = [];
  for (const line of text.split('\n')) {
    let owner: string | undefined = own;
    const words = line.split(/[\s'"`(),;]+/).filter((w) => w !== '');
    for (let i = 0; i < words.length; i++) {
      const w = words[i] as string;
      if (w === 'kubectl' || w === 'helm') owner = undefined;
      else if (w === '|') owner = own;
      else if (w === 'flotilla') {
        let path = 'flotilla';
        while (i + 1 < words.length && byPath(`${path} ${words[i + 1]}`)) path = `${path} ${words[++i]}`;
        owner = path;
      } else if (owner && /^--[a-z][a-z0-9-]*/.test(w))
        out.push({ command: owner, flag: (/^--([a-z][a-z0-9-]*)/.exec(w) as RegExpExecArray)[1] as string });
    }
  }
  return out;
}

describe('help texts against the code', () => {
  it('every --flag a help text mentions is a flag of the command it names', () => {
    const unknown: string[] = [];
    let seen = 0;
    for (const { path, spec } of ALL)
      for (const m of mentionedFlags(prose(spec), path.join(' '))) {
        seen++;
        const target = byPath(m.command);
        if (m.flag !== 'help' && !(target && Object.hasOwn(target.flags, m.flag)))
          unknown.push(`${path.join(' ')}: --${m.flag} (of ${m.command})`);
      }
    assert.ok(seen > 10, `the check saw ${seen} mentions`);
    assert.deepEqual(unknown, []);
  });

  it('names the field manager each command writes with', () => {
    const managers: Record<string, string> = {
      'flotilla apply': FIELD_MANAGER,
      'flotilla diff': FIELD_MANAGER,
      'flotilla controller': CONTROLLER_FIELD_MANAGER,
      'flotilla agent': agentFieldManager('<cluster-name>'),
    };
    const said: string[] = [];
    for (const { path, spec } of WITH_FLAGS)
      for (const m of prose(spec).matchAll(/field manager "([^"]+)"/g)) said.push(`${path.join(' ')}: ${m[1]}`);
    assert.ok(said.length >= 2, said.join('; '));
    for (const s of said) {
      const [command, manager] = s.split(': ') as [string, string];
      assert.equal(manager, managers[command], `${command}'s help names field manager "${manager}"`);
    }
    assert.match(
      commandHelp(['flotilla', 'controller'], byPath('flotilla controller') as CommandSpec),
      /field manager "flotilla-controller"/,
    );
  });

  it('controller flags default to what the controller does without them', () => {
    const d = (flag: keyof typeof CONTROLLER_FLAGS) => {
      const f = CONTROLLER_FLAGS[flag] as { type: string; default?: string };
      assert.ok(f.default !== undefined, `--${flag} has a default`);
      return f.type === 'duration' ? parseDuration(f.default) : f.default;
    };
    assert.deepEqual(
      {
        resyncMs: d('resync'),
        probeIntervalMs: d('probe-interval'),
        probeTimeoutMs: d('probe-timeout'),
        clusterStatusIntervalMs: d('cluster-status-interval'),
        notReadyTaintAfterMs: d('not-ready-taint-after'),
        failoverEvictionTimeoutMs: d('failover-eviction-timeout'),
        unhealthyClusterThreshold: Number(d('unhealthy-cluster-threshold')),
        gracefulEvictionTimeoutMs: d('graceful-eviction-timeout'),
        evictionPurgeMode: d('eviction-purge-mode'),
        leaseNamespace: d('lease-namespace'),
        memberConcurrency: Number(d('member-concurrency')),
      },
      { ...CONTROLLER_DEFAULTS },
    );
    assert.equal(AGENT_FLAGS['lease-namespace'].default, DEFAULT_LEASE_NAMESPACE);
    assert.equal(STATUS_CLUSTERS_FLAGS['lease-namespace'].default, DEFAULT_LEASE_NAMESPACE);
    assert.equal(AGENT_FLAGS['cluster-status-interval'].default, CONTROLLER_FLAGS['cluster-status-interval'].default);
  });

  it("names every state a status cell can be in, in 'status templates --help'", () => {
    const help = byPath('flotilla status templates')?.description ?? '';
    const named = STATE_FILTERS.filter((s) => new RegExp(`\\b${s}\\b`).test(help));
    assert.deepEqual(named, [...STATE_FILTERS]);
  });

  it('names what the code names: taint keys, execution namespaces', () => {
    assert.match(
      CONTROLLER_FLAGS['not-ready-taint-after'].help,
      new RegExp(`${NOT_READY_TAINT} \\(or /unreachable\\)`),
    );
    assert.equal(UNREACHABLE_TAINT, NOT_READY_TAINT.replace(/not-ready$/, 'unreachable'));
    const prefix = executionSpace('x').slice(0, -1);
    assert.match(byPath('flotilla agent')?.description ?? '', new RegExp(`\\(${prefix}<cluster-name>\\)`));
  });
});
