// CPU seconds, RSS and peak RSS of a running process, read from /proc (Linux).

import { readFileSync } from 'node:fs';

export interface ProcessUsage {
  cpuSeconds: number;
  /** VmRSS. */
  rssBytes: number;
  /** VmHWM: the largest RSS so far. */
  peakBytes: number;
  /** RssAnon: the part of VmRSS that is the process's own memory (heaps, stacks). */
  anonBytes: number;
  /** RssFile: the part of VmRSS that is pages of mapped files (the node binary, shared libraries). */
  fileBytes: number;
}

/** NaN figures when the process is gone or /proc cannot be read. */
export function processUsage(pid: number | undefined): ProcessUsage {
  const none = { cpuSeconds: NaN, rssBytes: NaN, peakBytes: NaN, anonBytes: NaN, fileBytes: NaN };
  if (pid === undefined) return none;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return {
      cpuSeconds: ticks / 100,
      rssBytes: kb('VmRSS'),
      peakBytes: kb('VmHWM'),
      anonBytes: kb('RssAnon'),
      fileBytes: kb('RssFile'),
    };
  } catch {
    return none;
  }
}
