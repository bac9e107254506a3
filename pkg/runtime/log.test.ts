import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';

import { createLogger, type LogLevel } from './log.js';

/** A logger at `level` and the JSON lines it wrote, parsed. */
function capture(level: LogLevel = 'debug') {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  stream.on('data', (c: Buffer) => {
    for (const l of c.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  return { logger: createLogger({ level, stream }), lines };
}

/** The line without its time (which is now). */
function withoutTime(line: Record<string, unknown> | undefined): Record<string, unknown> {
  assert.ok(line, 'a line was written');
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const { time: _time, ...rest } = line;
  return rest;
}

describe('createLogger: one JSON line per entry, the message as given and the fields beside it', () => {
  const cases: Array<{ name: string; msg: string; fields: Record<string, unknown>; want: Record<string, unknown> }> = [
    {
      name: 'a field called message stays a field (not appended to msg)',
      msg: 'pull cluster not ready',
      fields: { cluster: 'p1', message: 'its agent a-1 has never renewed Lease flotilla-cluster-lease/p1' },
      want: {
        level: 'warn',
        msg: 'pull cluster not ready',
        cluster: 'p1',
        message: 'its agent a-1 has never renewed Lease flotilla-cluster-lease/p1',
      },
    },
    {
      name: 'a message holding a printf token keeps its fields',
      msg: 'cannot write the status of %s',
      fields: { cluster: 'm1', error: 'HTTP 500 %s' },
      want: { level: 'warn', msg: 'cannot write the status of %s', cluster: 'm1', error: 'HTTP 500 %s' },
    },
    {
      name: 'fields named like the line keys (time, level, msg) are prefixed, stack and cause are kept as given',
      msg: 'odd fields',
      fields: { time: 't', level: 'l', msg: 'm', stack: 's', cause: 'c' },
      want: {
        level: 'warn',
        msg: 'odd fields',
        'field.time': 't',
        'field.level': 'l',
        'field.msg': 'm',
        stack: 's',
        cause: 'c',
      },
    },
    {
      name: 'credentials are redacted',
      msg: 'member connected',
      fields: { cluster: 'm1', token: 'secret-value' },
      want: { level: 'warn', msg: 'member connected', cluster: 'm1', token: '[redacted]' },
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const { logger, lines } = capture();
      logger.warn(c.msg, c.fields);
      assert.equal(lines.length, 1);
      assert.deepEqual(withoutTime(lines[0]), c.want);
    });

  it('writes the entries at and above its level only', () => {
    const { logger, lines } = capture('warn');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e', { n: 1 });
    assert.deepEqual(lines.map(withoutTime), [
      { level: 'warn', msg: 'w' },
      { level: 'error', msg: 'e', n: 1 },
    ]);
  });
});
