import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../test/fake-clock.js';
import {
  backoffDelay,
  isTerminal,
  QueueError,
  TerminalError,
  WorkQueue,
  type ReconcileEvent,
  type Reconciler,
  type Result,
  type WorkQueueOptions,
} from './queue.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets promise chains and p-queue's scheduling settle (no time passes on the fake clock). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}

type Answer = Result | undefined | Error;

/**
 * A reconciler the test steers: each call waits until the test answers it (or answers at once with
 * `auto`), and it records the order of calls and the most runs in flight, per key and overall.
 */
class Script implements Reconciler {
  readonly calls: string[] = [];
  private readonly waiting: Array<{ key: string; d: Deferred<Answer> }> = [];
  private readonly running = new Map<string, number>();
  maxPerKey = 0;
  maxTotal = 0;
  private total = 0;

  constructor(private readonly auto?: (key: string, call: number) => Answer) {}

  async reconcile(key: string): Promise<Result | undefined> {
    this.calls.push(key);
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    this.total++;
    this.maxPerKey = Math.max(this.maxPerKey, this.running.get(key) ?? 0);
    this.maxTotal = Math.max(this.maxTotal, this.total);
    try {
      let answer: Answer;
      if (this.auto) {
        answer = this.auto(key, this.calls.length);
      } else {
        const d = deferred<Answer>();
        this.waiting.push({ key, d });
        answer = await d.promise;
      }
      if (answer instanceof Error) throw answer;
      return answer;
    } finally {
      this.running.set(key, (this.running.get(key) ?? 1) - 1);
      this.total--;
    }
  }

  /** Keys whose calls are waiting for an answer, oldest first. */
  get open(): string[] {
    return this.waiting.map((w) => w.key);
  }

  answer(key: string, answer?: Answer): void {
    const i = this.waiting.findIndex((w) => w.key === key);
    const [w] = i >= 0 ? this.waiting.splice(i, 1) : [];
    assert.ok(w, `a call for ${key} is waiting`);
    w.d.resolve(answer);
  }
}

function queueWith(script: Script, options: WorkQueueOptions<string> = {}) {
  const clock = new FakeClock();
  const events: Array<ReconcileEvent<string>> = [];
  const controller = new AbortController();
  const queue = new WorkQueue(script, { clock, random: () => 0.5, onResult: (e) => events.push(e), ...options });
  return { queue, clock, events, controller, start: () => queue.start(controller.signal) };
}

// Suite timeouts only turn a hang (a run that never ends, a drain that never resolves) into a failure.
describe('WorkQueue: keys', { timeout: 10_000 }, () => {
  it('runs a key once however often it was added while queued, in the order keys were first added', async () => {
    const script = new Script(() => undefined);
    const { queue, start, controller } = queueWith(script, { concurrency: 1 });
    for (const k of ['a', 'b', 'a', 'c', 'b', 'a']) queue.add(k);
    assert.equal(queue.depth, 3);
    const done = start();
    await settle();
    assert.deepEqual(script.calls, ['a', 'b', 'c']);
    controller.abort();
    await done;
  });

  it('never runs one key on two workers; a key added during its run runs once more afterwards', async () => {
    const script = new Script();
    const { queue, start, controller } = queueWith(script, { concurrency: 4 });
    const done = start();
    queue.add('a');
    await settle();
    assert.deepEqual(script.open, ['a']);
    queue.add('a');
    queue.add('a');
    queue.add('b');
    await settle();
    assert.deepEqual(script.open, ['a', 'b'], 'the second run of a waits for the first');
    assert.equal(queue.depth, 1);
    script.answer('a');
    await settle();
    assert.deepEqual(script.open, ['b', 'a']);
    script.answer('a');
    script.answer('b');
    await settle();
    assert.deepEqual(script.calls, ['a', 'b', 'a']);
    assert.equal(script.maxPerKey, 1);
    controller.abort();
    await done;
  });

  it('runs at most `concurrency` keys at once', async () => {
    const script = new Script();
    const { queue, start, controller } = queueWith(script, { concurrency: 2 });
    const done = start();
    for (const k of ['a', 'b', 'c', 'd', 'e']) queue.add(k);
    await settle();
    assert.deepEqual(script.open, ['a', 'b']);
    assert.equal(queue.inFlight, 2);
    script.answer('b');
    await settle();
    assert.deepEqual(script.open, ['a', 'c']);
    for (const k of ['a', 'c', 'd', 'e']) {
      await settle();
      script.answer(k);
    }
    await settle();
    assert.equal(script.maxTotal, 2);
    assert.deepEqual(script.calls, ['a', 'b', 'c', 'd', 'e']);
    controller.abort();
    await done;
  });

  it('drops new keys past maxQueued and says so, keeping what waits', async () => {
    const script = new Script(() => undefined);
    const dropped: string[] = [];
    const { queue, start, controller } = queueWith(script, { maxQueued: 2, onDrop: (k) => dropped.push(k) });
    assert.equal(queue.add('a'), true);
    assert.equal(queue.addAfter('b', 1000), true);
    assert.equal(queue.add('c'), false);
    assert.equal(queue.add('a'), true, 'a key already waiting is not new');
    assert.deepEqual(dropped, ['c']);
    assert.equal(queue.stats().dropped, 1);
    const done = start();
    await settle();
    assert.deepEqual(script.calls, ['a']);
    controller.abort();
    await done;
  });
});

describe('WorkQueue: delays and backoff', { timeout: 10_000 }, () => {
  it('grows the retry delay exponentially up to the maximum and resets it on success', async () => {
    let failing = true;
    const script = new Script(() => (failing ? new Error('member down') : undefined));
    const { queue, clock, events, start, controller } = queueWith(script, {
      backoff: { baseDelayMs: 100, maxDelayMs: 1000, jitter: 0.2 },
    });
    const done = start();
    queue.add('a');
    await settle();
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      const [delay] = clock.pending();
      assert.ok(delay !== undefined);
      delays.push(delay);
      clock.advance(delay - 1);
      await settle();
      assert.equal(script.calls.length, i + 1, 'not run before its delay');
      clock.advance(1);
      await settle();
    }
    assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000]);
    assert.equal(queue.failures('a'), 7);
    failing = false;
    clock.advance(clock.pending()[0] ?? 0);
    await settle();
    assert.equal(queue.failures('a'), 0);
    assert.deepEqual(clock.pending(), []);
    assert.deepEqual(events.map((e) => e.outcome).slice(-2), ['error', 'success']);
    assert.equal(events[0]?.retryInMs, 100);
    assert.ok(events[0]?.error instanceof Error);
    controller.abort();
    await done;
  });

  it('spreads delays by the jitter factor, within the maximum', () => {
    const o = { baseDelayMs: 100, maxDelayMs: 1000, jitter: 0.2 };
    assert.equal(
      backoffDelay(1, o, () => 0),
      80,
    );
    assert.equal(
      backoffDelay(1, o, () => 0.5),
      100,
    );
    assert.equal(
      backoffDelay(1, o, () => 0.9999),
      120,
    );
    assert.equal(
      backoffDelay(3, o, () => 0),
      320,
    );
    assert.equal(
      backoffDelay(10, o, () => 0.9999),
      1000,
    );
    assert.equal(
      backoffDelay(5000, o, () => 0.5),
      1000,
    );
  });

  it('forget() starts the next backoff from the base delay', async () => {
    const script = new Script(() => new Error('x'));
    const { queue, clock, start, controller } = queueWith(script, {
      backoff: { baseDelayMs: 100, maxDelayMs: 10_000, jitter: 0 },
    });
    const done = start();
    queue.add('a');
    await settle();
    clock.advance(100);
    await settle();
    assert.deepEqual(clock.pending(), [200]);
    queue.forget('a');
    assert.equal(queue.failures('a'), 0);
    clock.advance(200);
    await settle();
    assert.deepEqual(clock.pending(), [100]);
    controller.abort();
    await done;
  });

  it('does not retry a terminal error, also when it is the cause of another', async () => {
    const script = new Script((key) =>
      key === 'a' ? new TerminalError('bad spec') : new Error('wrapped', { cause: new TerminalError('bad') }),
    );
    const { queue, clock, events, start, controller } = queueWith(script);
    const done = start();
    queue.add('a');
    queue.add('b');
    await settle();
    assert.deepEqual(
      events.map((e) => [e.key, e.outcome, e.failures]),
      [
        ['a', 'terminal', 0],
        ['b', 'terminal', 0],
      ],
    );
    assert.deepEqual(clock.pending(), []);
    assert.equal(isTerminal(new Error('plain')), false);
    controller.abort();
    await done;
  });

  it('runs a key again after Result.requeueAfter, and after the backoff for Result.requeue', async () => {
    const script = new Script((key, call) =>
      call > 2 ? undefined : key === 'later' ? { requeueAfter: 30_000 } : { requeue: true },
    );
    const { queue, clock, events, start, controller } = queueWith(script, {
      backoff: { baseDelayMs: 100, maxDelayMs: 1000, jitter: 0 },
    });
    const done = start();
    queue.add('later');
    queue.add('again');
    await settle();
    assert.deepEqual(clock.pending(), [100, 30_000]);
    assert.equal(queue.failures('later'), 0);
    assert.equal(queue.failures('again'), 1);
    clock.advance(100);
    await settle();
    clock.advance(30_000);
    await settle();
    assert.deepEqual(script.calls, ['later', 'again', 'again', 'later']);
    assert.deepEqual(
      events.map((e) => e.outcome),
      ['requeueAfter', 'requeue', 'success', 'success'],
    );
    controller.abort();
    await done;
  });

  it('keeps the earliest of several delayed adds, and a run cancels the pending one', async () => {
    const script = new Script(() => undefined);
    const { queue, clock, start, controller } = queueWith(script);
    const done = start();
    queue.addAfter('a', 5000);
    queue.addAfter('a', 1000);
    queue.addAfter('a', 3000);
    assert.deepEqual(clock.pending(), [1000]);
    assert.equal(queue.stats().delayed, 1);
    queue.addAfter('b', 1000);
    queue.add('b');
    await settle();
    assert.deepEqual(script.calls, ['b']);
    assert.deepEqual(clock.pending(), [1000], "b's run cancelled its delayed add");
    clock.advance(1000);
    await settle();
    assert.deepEqual(script.calls, ['b', 'a']);
    controller.abort();
    await done;
  });
});

describe('WorkQueue: lifecycle', { timeout: 10_000 }, () => {
  it('runs nothing before start(), then drains on abort: in-flight runs finish, nothing new starts', async () => {
    const script = new Script();
    const { queue, clock, events, start, controller } = queueWith(script, { concurrency: 1 });
    queue.add('a');
    queue.add('b');
    queue.addAfter('c', 1000);
    await settle();
    assert.deepEqual(script.calls, []);
    let finished = false;
    const done = start().then(() => (finished = true));
    await settle();
    assert.deepEqual(script.open, ['a']);
    queue.add('a');
    controller.abort();
    await settle();
    assert.equal(finished, false, 'waits for the run in flight');
    assert.equal(queue.add('d'), false);
    assert.deepEqual(clock.pending(), []);
    script.answer('a', new Error('fails while stopping'));
    await done;
    assert.equal(finished, true);
    assert.deepEqual(script.calls, ['a'], 'neither b, c nor the re-added a ran');
    assert.deepEqual(clock.pending(), [], 'no retry was scheduled');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.retryInMs, undefined);
    assert.equal(queue.size, 0);
  });

  it('can be started once, and rejects impossible options', async () => {
    const { start, controller } = queueWith(new Script(() => undefined));
    controller.abort();
    await start();
    await assert.rejects(start(), QueueError);
    assert.throws(() => new WorkQueue(new Script(), { concurrency: 0 }), QueueError);
    assert.throws(() => new WorkQueue(new Script(), { maxQueued: 1.5 }), QueueError);
    assert.throws(() => new WorkQueue(new Script(), { backoff: { baseDelayMs: 10, maxDelayMs: 5 } }), QueueError);
  });
});

describe('WorkQueue: the event loop', { timeout: 10_000 }, () => {
  it('lets the event loop turn during a backlog of runs that do no I/O', async () => {
    const clock = new FakeClock();
    let ran = 0;
    // Each run is 5 ms of work on the queue's clock, and resolves at once (nothing to wait for).
    const script = new Script(() => {
      ran++;
      clock.advance(5);
      return undefined;
    });
    const { queue, controller, start } = queueWith(script, { clock, concurrency: 4 });
    for (let i = 0; i < 50; i++) queue.add(`k${i}`);
    const done = start();
    let ranWhenTurned = -1;
    setImmediate(() => (ranWhenTurned = ran));
    for (let i = 0; i < 100 && ran < 50; i++) await settle();
    assert.equal(ran, 50);
    assert.ok(
      ranWhenTurned >= 1 && ranWhenTurned < 50,
      `timers and I/O waited for ${ranWhenTurned} of the 50 runs (250 ms of work)`,
    );
    controller.abort();
    await done;
  });
});
