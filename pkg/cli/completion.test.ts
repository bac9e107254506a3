import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { captureIO } from '../../test/cli-io.js';
import type { CommandSpec } from './command.js';
import { ROOT, SHELLS } from './commands.js';
import { run } from './index.js';

function commands(spec: CommandSpec = ROOT, path: string[] = []): Array<{ path: string[]; spec: CommandSpec }> {
  return [{ path, spec }, ...(spec.subcommands ?? []).flatMap((c) => commands(c, [...path, c.name]))];
}

async function script(shell: string): Promise<string> {
  const io = captureIO();
  assert.equal(await run(['completion', shell], io), 0, io.err());
  return io.out();
}

const installed = new Map<string, boolean>();
function has(program: string): boolean {
  if (!installed.has(program))
    installed.set(program, spawnSync(program, ['--version'], { stdio: 'ignore' }).status === 0);
  return installed.get(program) === true;
}

describe('flotilla completion', () => {
  for (const shell of SHELLS) {
    it(`${shell}: mentions every command, subcommand and flag in the table`, async () => {
      const text = await script(shell);
      for (const { path, spec } of commands()) {
        if (path.length > 0)
          assert.match(text, new RegExp(`\\b${path[path.length - 1]}\\b`), `${shell} names ${path.join(' ')}`);
        for (const [name, flag] of Object.entries(spec.flags)) {
          // fish names flags without dashes (-l name, -s f); bash and zsh with them.
          assert.ok(
            text.includes(`--${name}`) || text.includes(`-l ${name}`),
            `${shell} offers --${name} of ${path.join(' ') || 'flotilla'}`,
          );
          if (flag.short)
            assert.ok(
              text.includes(`-${flag.short}`) || text.includes(`-s ${flag.short}`),
              `${shell} offers -${flag.short}`,
            );
          for (const choice of flag.choices ?? [])
            assert.ok(text.includes(choice), `${shell} offers ${choice} for --${name}`);
        }
      }
    });
  }

  it('bash: the script parses (bash -n)', async () => {
    const r = spawnSync('bash', ['-n'], { input: await script('bash'), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });
  it('zsh: the script parses (zsh -n)', { skip: !has('zsh') && 'zsh is not installed' }, async () => {
    const r = spawnSync('zsh', ['-n'], { input: await script('zsh'), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });
  it('fish: the script parses (fish --no-execute)', { skip: !has('fish') && 'fish is not installed' }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-completion-'));
    try {
      writeFileSync(join(dir, 'flotilla.fish'), await script('fish'));
      const r = spawnSync('fish', ['--no-execute', join(dir, 'flotilla.fish')], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('what TAB offers', () => {
    let dir = '';
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'flotilla-completion-'));
      for (const shell of SHELLS) writeFileSync(join(dir, `flotilla.${shell}`), await script(shell));
      writeFileSync(join(dir, 'policies.yaml'), '');
      // zsh's completion widgets only run inside its line editor, so these stand-ins print what the
      // script offers, keeping what starts with the word being completed, as zsh would.
      writeFileSync(
        join(dir, 'zsh-stubs.zsh'),
        [
          'compdef() { :; }',
          'source ./flotilla.zsh',
          '_describe() { local e; for e in "${(@P)4}"; do [[ ${e%%:*} == ${PREFIX}* ]] && print -r -- "${e%%:*}"; done; }',
          'compadd() { [[ $1 == -- ]] && shift; local e; for e in "$@"; do [[ $e == ${PREFIX}* ]] && print -r -- "$e"; done; }',
          '_files() { print -r -- "<files $*>"; }',
          'compset() { PREFIX=${PREFIX#*=}; }',
          '_message() { :; }',
        ].join('\n'),
      );
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    /** Completes the last word of `line` (words split on spaces) as each shell would on TAB. */
    const complete: Record<(typeof SHELLS)[number], (line: string) => string[]> = {
      bash: (line) => {
        const words = line.split(' ');
        return shell('bash', [
          '-c',
          `source ./flotilla.bash; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _flotilla; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ]);
      },
      zsh: (line) => {
        const words = line.split(' ');
        return shell('zsh', [
          '-f',
          '-c',
          `source ./zsh-stubs.zsh; words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; PREFIX='${words[words.length - 1] ?? ''}'; _flotilla`,
        ]);
      },
      fish: (line) =>
        shell('fish', ['-c', `source ./flotilla.fish; complete -C '${line}'`]).map((l) => l.split('\t')[0] ?? l),
    };
    function shell(program: string, args: string[]): string[] {
      const r = spawnSync(program, args, { cwd: dir, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.split('\n').filter((l) => l !== '');
    }

    const cases: Array<{ line: string; offers: string[]; shells?: ReadonlyArray<(typeof SHELLS)[number]> }> = [
      { line: 'flotilla re', offers: ['render'] },
      {
        line: 'flotilla ',
        offers: [
          'render',
          'validate',
          'admit',
          'diff',
          'apply',
          'status',
          'ui',
          'controller',
          'agent',
          'webhook',
          'certs',
          'version',
          'completion',
          'help',
        ],
      },
      { line: 'flotilla certs ', offers: ['create', 'patch'] },
      { line: 'flotilla status ', offers: ['clusters', 'templates', 'template', 'policies'] },
      { line: 'flotilla status templates --st', offers: ['--state'] },
      { line: 'flotilla certs create --se', offers: ['--secret', '--service'] },
      { line: 'flotilla render -o ', offers: ['yaml', 'json', 'name'] },
      { line: 'flotilla render --output = j', offers: ['json'], shells: ['bash'] },
      { line: 'flotilla render --output=j', offers: ['json'], shells: ['zsh'] },
      { line: 'flotilla render --output=j', offers: ['--output=json'], shells: ['fish'] },
      { line: 'flotilla render -f pol', offers: ['policies.yaml'], shells: ['bash', 'fish'] },
      { line: 'flotilla render -f pol', offers: ['<files >'], shells: ['zsh'] },
      { line: 'flotilla certs create --cert-dir ', offers: ['<files -/>'], shells: ['zsh'] },
      { line: 'flotilla render -f policies.yaml --cl', offers: ['--cluster'] },
      { line: 'flotilla render --cluster ', offers: [] },
      { line: 'flotilla completion ', offers: ['bash', 'zsh', 'fish'] },
      { line: 'flotilla help certs ', offers: ['create', 'patch'] },
      { line: 'flotilla webhook --cert-reload-interval 10s --k', offers: ['--kubeconfig'] },
    ];
    for (const sh of SHELLS) {
      for (const c of cases.filter((c) => !c.shells || c.shells.includes(sh))) {
        it(
          `${sh}: offers ${JSON.stringify(c.offers)} for ${JSON.stringify(c.line)}`,
          { skip: sh !== 'bash' && !has(sh) && `${sh} is not installed` },
          () => {
            assert.deepEqual(complete[sh](c.line).sort(), [...c.offers].sort());
          },
        );
      }
    }
  });
});
