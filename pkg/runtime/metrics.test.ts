import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { MetricsError, Registry } from './metrics.js';

void describe('Registry', () => {
  void it('renders a counter per label set with HELP and TYPE lines', () => {
    const r = new Registry();
    const c = r.counter('requests_total', 'Requests served.', ['path', 'outcome']);
    c.inc({ path: '/validate', outcome: 'allowed' });
    c.inc({ path: '/validate', outcome: 'allowed' }, 2);
    c.inc({ path: '/convert', outcome: 'failure' });
    assert.equal(
      r.render(),
      [
        '# HELP requests_total Requests served.',
        '# TYPE requests_total counter',
        'requests_total{path="/validate",outcome="allowed"} 3',
        'requests_total{path="/convert",outcome="failure"} 1',
        '',
      ].join('\n'),
    );
  });

  void it('renders a sampled gauge with the value read at each render', () => {
    const r = new Registry();
    let n = 1;
    r.sampled('heap_bytes', 'Heap.', () => n++);
    assert.equal(r.render(), '# HELP heap_bytes Heap.\n# TYPE heap_bytes gauge\nheap_bytes 1\n');
    assert.equal(r.render(), '# HELP heap_bytes Heap.\n# TYPE heap_bytes gauge\nheap_bytes 2\n');
    assert.throws(() => r.sampled('heap_bytes', 'Again.', () => 0), MetricsError);
  });

  void it('renders histogram buckets cumulatively with +Inf, sum and count', () => {
    const r = new Registry();
    const h = r.histogram('latency_seconds', 'Latency.', ['path'], [0.1, 1]);
    for (const v of [0.05, 0.5, 0.7, 3]) h.observe({ path: '/x' }, v);
    assert.equal(
      r.render(),
      [
        '# HELP latency_seconds Latency.',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{path="/x",le="0.1"} 1',
        'latency_seconds_bucket{path="/x",le="1"} 3',
        'latency_seconds_bucket{path="/x",le="+Inf"} 4',
        'latency_seconds_sum{path="/x"} 4.25',
        'latency_seconds_count{path="/x"} 4',
        '',
      ].join('\n'),
    );
  });

  void it('escapes backslashes, quotes and newlines in label values and help', () => {
    const r = new Registry();
    r.gauge('g', 'line one\nline \\ two', ['v']).set({ v: 'a"b\\c\nd' }, 1.5);
    assert.equal(r.render(), '# HELP g line one\\nline \\\\ two\n# TYPE g gauge\ng{v="a\\"b\\\\c\\nd"} 1.5\n');
  });

  const misuse: Array<{ name: string; act: (r: Registry) => void }> = [
    { name: 'an invalid metric name', act: (r) => r.counter('bad-name', 'x') },
    { name: 'an invalid label name', act: (r) => r.counter('c', 'x', ['bad-label']) },
    { name: 'a histogram label named le', act: (r) => r.histogram('h', 'x', ['le']) },
    { name: 'a name registered twice', act: (r) => (r.counter('c', 'x'), r.gauge('c', 'y')) },
    { name: 'a missing label', act: (r) => r.counter('c', 'x', ['path']).inc({}) },
    { name: 'a counter going down', act: (r) => r.counter('c', 'x').inc({}, -1) },
  ];
  for (const m of misuse) {
    void it(`rejects ${m.name}`, () => {
      assert.throws(() => m.act(new Registry()), MetricsError);
    });
  }
});
