// A small Prometheus registry: counters, gauges and histograms with fixed label names, rendered in the
// text exposition format 0.0.4. Enough for /metrics on the webhook and the controller; no dependency.
// Label values are whatever callers pass, so callers keep them to a bounded set (paths from a route
// table, outcomes from an enum), never raw request input.

import { errorClass } from '../../api/internal/errors.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Seconds; fits request handling from sub-millisecond to a few seconds. */
export const DEFAULT_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

export class MetricsError extends errorClass('MetricsError', 'METRICS') {}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export type Labels = Readonly<Record<string, string>>;

const escapeLabelValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

interface Renderable {
  readonly name: string;
  render(out: string[]): void;
}

abstract class Metric<S> implements Renderable {
  protected readonly series = new Map<string, { values: string[]; state: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!METRIC_NAME.test(name)) throw new MetricsError(`invalid metric name ${JSON.stringify(name)}`);
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith('__'))
        throw new MetricsError(`invalid label name ${JSON.stringify(l)} on ${name}`);
    }
  }

  abstract readonly type: string;
  protected abstract initial(): S;
  protected abstract renderSeries(labels: string[], state: S, out: string[]): void;

  protected stateFor(labels: Labels): S {
    const values = this.labelNames.map((l) => {
      const v = labels[l];
      if (v === undefined) throw new MetricsError(`metric ${this.name} needs label ${l}`);
      return v;
    });
    const key = values.join('\u0000');
    let entry = this.series.get(key);
    if (!entry) {
      entry = { values, state: this.initial() };
      this.series.set(key, entry);
    }
    return entry.state;
  }

  protected labelPairs(values: readonly string[], extra?: [string, string]): string {
    const pairs = this.labelNames.map((l, i) => `${l}="${escapeLabelValue(values[i] ?? '')}"`);
    if (extra) pairs.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
    return pairs.length ? `{${pairs.join(',')}}` : '';
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    for (const { values, state } of this.series.values()) this.renderSeries(values, state, out);
  }
}

export class Counter extends Metric<{ value: number }> {
  readonly type = 'counter';
  protected initial() {
    return { value: 0 };
  }
  /** Adds `n` (>= 0) to the series with these labels. */
  inc(labels: Labels = {}, n = 1): void {
    if (!(n >= 0)) throw new MetricsError(`counter ${this.name} can only go up (got ${n})`);
    this.stateFor(labels).value += n;
  }
  get(labels: Labels = {}): number {
    return this.stateFor(labels).value;
  }
  protected renderSeries(values: string[], state: { value: number }, out: string[]): void {
    out.push(`${this.name}${this.labelPairs(values)} ${formatNumber(state.value)}`);
  }
}

export class Gauge extends Metric<{ value: number }> {
  readonly type = 'gauge';
  protected initial() {
    return { value: 0 };
  }
  set(labels: Labels, value: number): void {
    this.stateFor(labels).value = value;
  }
  inc(labels: Labels = {}, n = 1): void {
    this.stateFor(labels).value += n;
  }
  get(labels: Labels = {}): number {
    return this.stateFor(labels).value;
  }
  protected renderSeries(values: string[], state: { value: number }, out: string[]): void {
    out.push(`${this.name}${this.labelPairs(values)} ${formatNumber(state.value)}`);
  }
}

class SampledGauge extends Metric<null> {
  readonly type = 'gauge';
  constructor(
    name: string,
    help: string,
    private readonly read: () => number,
  ) {
    super(name, help, []);
  }
  protected initial(): null {
    return null;
  }
  protected renderSeries(): void {}
  override render(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} gauge`);
    out.push(`${this.name} ${formatNumber(this.read())}`);
  }
}

interface HistogramState {
  /** Non-cumulative count per bucket; rendered cumulatively. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Metric<HistogramState> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[] = DEFAULT_BUCKETS) {
    super(name, help, labelNames);
    if (labelNames.includes('le')) throw new MetricsError(`histogram ${name} cannot have a label named le`);
    const sorted = [...buckets].sort((a, b) => a - b);
    if (sorted.some((b, i) => !Number.isFinite(b) || (i > 0 && b === sorted[i - 1])))
      throw new MetricsError(`histogram ${name} needs distinct finite buckets`);
    this.buckets = sorted;
  }

  protected initial(): HistogramState {
    return { counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
  }

  observe(labels: Labels, value: number): void {
    const s = this.stateFor(labels);
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += value;
    s.count += 1;
  }

  /** Count and sum of the series with these labels. */
  get(labels: Labels = {}): { count: number; sum: number } {
    const s = this.stateFor(labels);
    return { count: s.count, sum: s.sum };
  }

  protected renderSeries(values: string[], state: HistogramState, out: string[]): void {
    let cumulative = 0;
    this.buckets.forEach((b, i) => {
      cumulative += state.counts[i] ?? 0;
      out.push(`${this.name}_bucket${this.labelPairs(values, ['le', formatNumber(b)])} ${cumulative}`);
    });
    out.push(`${this.name}_bucket${this.labelPairs(values, ['le', '+Inf'])} ${state.count}`);
    out.push(`${this.name}_sum${this.labelPairs(values)} ${formatNumber(state.sum)}`);
    out.push(`${this.name}_count${this.labelPairs(values)} ${state.count}`);
  }
}

export class Registry {
  private readonly metrics = new Map<string, Renderable>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labelNames, buckets));
  }

  /** A gauge without labels whose value `read` gives each time the registry is rendered. */
  sampled(name: string, help: string, read: () => number): void {
    this.add(new SampledGauge(name, help, read));
  }

  /** The text exposition of every metric, in registration order. */
  render(): string {
    const out: string[] = [];
    for (const m of this.metrics.values()) m.render(out);
    return out.length ? `${out.join('\n')}\n` : '';
  }

  private add<M extends Renderable>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new MetricsError(`metric ${metric.name} is already registered`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
}
