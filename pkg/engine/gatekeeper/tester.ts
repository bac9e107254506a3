// Gatekeeper's path tests (pkg/mutation/path/tester): `MustExist` / `MustNotExist` on a prefix of the
// location, judged at that depth of the walk each time the walk reaches it (per list item).

import { isPathPrefix, parsePath, PathError, type PathNode } from './path.js';

export type Condition = 'MustExist' | 'MustNotExist';

export class Tester {
  /** Condition by depth (index of the subPath's last node in the location). */
  private readonly tests: ReadonlyMap<number, string>;
  constructor(tests: ReadonlyMap<number, string>) {
    this.tests = tests;
  }
  existsOkay(depth: number): boolean {
    const c = this.tests.get(depth);
    return c === undefined || c === 'MustExist';
  }
  missingOkay(depth: number): boolean {
    const c = this.tests.get(depth);
    return c === undefined || c === 'MustNotExist';
  }
}

export class TesterError extends Error {
  constructor(
    message: string,
    readonly reason: 'path-test-location' | 'path-test-prefix' | 'path-test-conflict',
  ) {
    super(message);
    this.name = 'TesterError';
  }
}

/**
 * Builds the tester as core.NewTester and tester.New do, with their checks in their order: each subPath
 * parses and is a prefix of the location; no depth is both MustExist and MustNotExist; and no MustExist
 * test is listed after the first MustNotExist one (Gatekeeper compares their positions in the list).
 */
export function newTester(
  location: readonly PathNode[],
  raw: ReadonlyArray<{ subPath: string; condition: string }>,
): Tester {
  const parsed = raw.map((t, i) => {
    try {
      return { path: parsePath(t.subPath), condition: t.condition };
    } catch (err: unknown) {
      if (!(err instanceof PathError)) throw err;
      throw new TesterError(
        `pathTests[${i}].subPath ${JSON.stringify(t.subPath)}: ${err.message}`,
        'path-test-location',
      );
    }
  });
  for (const [i, t] of parsed.entries())
    if (!isPathPrefix(t.path, location))
      throw new TesterError(
        `pathTests[${i}].subPath ${JSON.stringify(raw[i]?.subPath)} is not a prefix of the location`,
        'path-test-prefix',
      );
  const tests = new Map<number, string>();
  let lowestMustNot = Number.MAX_SAFE_INTEGER;
  let highestMust = 0;
  for (const [i, t] of parsed.entries()) {
    tests.set(t.path.length - 1, t.condition);
    if (t.condition === 'MustNotExist' && i < lowestMustNot) lowestMustNot = i;
    else if (t.condition === 'MustExist' && i > highestMust) highestMust = i;
  }
  for (const [i, t] of parsed.entries())
    if (tests.get(t.path.length - 1) !== t.condition)
      throw new TesterError(
        `conflicting path test conditions: pathTests[${i}].subPath ${JSON.stringify(raw[i]?.subPath)} is marked both MustExist and MustNotExist`,
        'path-test-conflict',
      );
  if (highestMust > lowestMustNot)
    throw new TesterError(
      `conflicting path test conditions: pathTests[${highestMust}] is marked MustExist but pathTests[${lowestMustNot}] before it MustNotExist`,
      'path-test-conflict',
    );
  return new Tester(tests);
}
