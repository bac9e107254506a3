// `--help` text, generated from a command's spec so it always lists the flags the command parses, with
// their defaults.

import { HELP_FLAG, type CommandSpec, type FlagSpec } from './command.js';

const WIDTH = 100;
/** Option names longer than this put their description on the next line. */
const MAX_NAME_COLUMN = 34;

/** The value's name in the synopsis and the options list: PATH, yaml|json|name, VALUE. */
export function valueName(f: FlagSpec): string {
  return f.value ?? (f.choices ? f.choices.join('|') : 'VALUE');
}

function synopsisToken(name: string, f: FlagSpec): string {
  const flag = f.short ? `-${f.short}` : `--${name}`;
  const token = f.type === 'boolean' ? flag : `${flag} ${valueName(f)}${f.multiple ? '...' : ''}`;
  return f.required ? token : `[${token}]`;
}

/** Joins words into lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(words: readonly string[], first: string, indent: string, width = WIDTH): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const w of words) {
    if (!empty && line.length + 1 + w.length > width) {
      lines.push(line);
      line = indent + w;
    } else {
      line += (empty ? '' : ' ') + w;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}

function optionRows(spec: CommandSpec): string[] {
  const entries = [...Object.entries(spec.flags), ['help', HELP_FLAG] as const];
  const left = entries.map(
    ([name, f]) => `  ${f.short ? `-${f.short}, ` : '    '}--${name}${f.type === 'boolean' ? '' : ` ${valueName(f)}`}`,
  );
  const column = Math.min(MAX_NAME_COLUMN, Math.max(...left.map((l) => l.length)));
  const rows: string[] = [];
  entries.forEach(([, f], i) => {
    const notes = [
      f.multiple ? 'repeatable' : '',
      f.required ? 'required' : '',
      f.default !== undefined ? `default ${f.default === '' ? "''" : f.default}` : '',
    ].filter((n) => n !== '');
    // The notes stay on one line, so '(default X)' is never split.
    const words = [...f.help.split(' '), ...(notes.length > 0 ? [`(${notes.join('; ')})`] : [])];
    const name = left[i] ?? '';
    const indent = ' '.repeat(column + 2);
    if (name.length > column) {
      rows.push(name, ...wrap(words, indent, indent));
    } else {
      rows.push(...wrap(words, `${name.padEnd(column)}  `, indent));
    }
  });
  return rows;
}

/** The full help of the command at `path` (`['flotilla', 'certs', 'create']`). */
export function commandHelp(path: readonly string[], spec: CommandSpec): string {
  const command = path.join(' ');
  const tokens = spec.subcommands
    ? ['COMMAND', '[options]']
    : [
        ...Object.entries(spec.flags).map(([name, f]) => synopsisToken(name, f)),
        ...(spec.positional ? [spec.positional.name] : []),
      ];
  const out = [spec.summary, '', 'Usage:', ...wrap(tokens, `  ${command} `, ' '.repeat(command.length + 3))];
  if (spec.description) out.push('', spec.description);
  if (spec.subcommands) {
    const width = Math.max(...spec.subcommands.map((c) => c.name.length));
    out.push('', 'Commands:', ...spec.subcommands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`));
  }
  const positional = spec.positional;
  if (positional?.choices) out.push('', `${positional.name}: one of ${positional.choices.join(', ')}.`);
  else if (positional?.help) out.push('', `${positional.name}: ${positional.help}`);
  out.push('', 'Options:', ...optionRows(spec));
  if (spec.footer) out.push('', spec.footer);
  return `${out.join('\n')}\n`;
}
