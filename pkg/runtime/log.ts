// Structured logs for the long-running commands: JSON lines on a stream (stderr), one object per entry
// with time, level, msg and the entry's fields (template, cluster, policy, member...), written at once.
// Secrets never reach a log: values under keys that name credentials are replaced, at any depth, and an
// object of kind Secret is reduced to its name.

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
}

/** Keys whose values are credentials or may hold them (kubeconfig fields, Secret payloads). */
const SECRET_KEYS = new Set([
  'data',
  'stringData',
  'token',
  'password',
  'client-key-data',
  'client-certificate-data',
  'certificate-authority-data',
  'kubeconfig',
  'bearerToken',
  'authorization',
]);
const MAX_DEPTH = 8;
const REDACTED = '[redacted]';

/** A copy of `value` with credentials replaced; own properties only, depth bounded. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Error) return value.message;
  const o = value as Record<string, unknown>;
  if (Object.prototype.hasOwnProperty.call(o, 'kind') && o.kind === 'Secret') {
    const meta = o.metadata;
    const name =
      meta !== null && typeof meta === 'object' && Object.prototype.hasOwnProperty.call(meta, 'name')
        ? (meta as Record<string, unknown>).name
        : undefined;
    return { kind: 'Secret', name, content: REDACTED };
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) out[k] = SECRET_KEYS.has(k) ? REDACTED : redact(o[k], depth + 1);
  return out;
}

/** Keys of the line itself: a field of the same name is written as `field.<name>`. */
const RESERVED = new Set(['time', 'level', 'msg']);

/** One log line: time, level and msg first, then the fields (redacted; a reserved name is prefixed). */
export function formatEntry(time: Date, level: string, message: string, fields: Record<string, unknown>): string {
  const out: Record<string, unknown> = { time: time.toISOString(), level, msg: message };
  for (const [k, value] of Object.entries(redact(fields) as Record<string, unknown>))
    Object.defineProperty(out, RESERVED.has(k) ? `field.${k}` : k, { value, enumerable: true, writable: true });
  return JSON.stringify(out);
}

const RANK: Readonly<Record<LogLevel, number>> = { error: 0, warn: 1, info: 2, debug: 3 };

/** Entries at `level` and above, each one line on `stream`; the message is written as given (no printf tokens). */
export function createLogger(options: { level: LogLevel; stream: NodeJS.WritableStream }): Logger {
  const most = RANK[options.level];
  const log = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (RANK[level] <= most) options.stream.write(`${formatEntry(new Date(), level, message, fields ?? {})}\n`);
  };
  return { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };
}
