// Durations written as Go's time.Duration prints them (`2s`, `1.5s`, `500ms`, `1m30s`, `2h0m0s`), the
// syntax the flags take (pkg/cli/duration.ts reads it back), for messages that say how long was waited.

/** `ms` milliseconds (rounded to whole milliseconds) as Go's time.Duration.String() writes them. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const sign = ms < 0 ? '-' : '';
  const total = Math.round(Math.abs(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${sign}${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const rest = total % 60_000;
  const whole = Math.floor(rest / 1000);
  const fraction = rest % 1000;
  const s = fraction === 0 ? `${whole}s` : `${whole}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}
