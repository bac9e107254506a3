// node:test glue: one environment for the enclosing describe(), started before its first test and stopped
// after its last, keeping the logs when any of its tests failed.

import { after, afterEach, before } from 'node:test';

import { startEnvironment, type Environment, type EnvironmentOptions } from './index.js';

/** Generous: a cold 2-core machine needs well under a minute per apiserver (see hack/envtest/README.md). */
export const START_TIMEOUT_MS = 5 * 60_000;

/**
 * Call inside describe(). Returns a getter for the running environment; the getter throws if the
 * environment failed to start (the before hook has already reported why).
 */
export function useEnvironment(opts: EnvironmentOptions = {}): () => Environment {
  let env: Environment | undefined;
  let failed = false;
  before(
    async () => {
      env = await startEnvironment(opts);
    },
    { timeout: START_TIMEOUT_MS },
  );
  afterEach((t) => {
    // @types/node 24 declares `passed` on SuiteContext only; Node 24 sets it on the TestContext too.
    if ('passed' in t && t.passed === false) failed = true;
  });
  after(
    async () => {
      await env?.stop({ keepLogs: failed });
    },
    { timeout: 60_000 },
  );
  return () => {
    if (!env) throw new Error('the test environment did not start; see the before hook');
    return env;
  };
}
