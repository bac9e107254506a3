// A benchmark's view of the heap a process retains: with FLOTILLA_BENCH_HEAP_METRIC=true in its environment
// and Node started with --expose-gc, /metrics carries `flotilla_bench_heap_used_after_gc_bytes`, the heap
// in use once a full collection has run at the scrape (heap that RSS counts but nothing holds is left
// out). Each scrape then costs a full collection, so the gauge exists only when both are asked for; it
// reads nothing from the request.

import type { Registry } from './metrics.js';

export const HEAP_METRIC_ENV = 'FLOTILLA_BENCH_HEAP_METRIC';
export const HEAP_METRIC = 'flotilla_bench_heap_used_after_gc_bytes';

/** Registers the gauge when `env` asks for it and gc is exposed; whether it did. */
export function registerHeapGauge(registry: Registry, env: Readonly<Record<string, string | undefined>>): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (env[HEAP_METRIC_ENV] !== 'true' || typeof gc !== 'function') return false;
  registry.sampled(HEAP_METRIC, 'Heap in use after a full garbage collection at this scrape (benchmarks only).', () => {
    gc();
    return process.memoryUsage().heapUsed;
  });
  return true;
}
