// `flotilla version` (and `flotilla --version`): the version in the package's own package.json, read at
// run time so it cannot disagree with the package that was installed.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { CommandIO } from './command.js';
import { errorClass } from '../../api/internal/errors.js';

/** From the built module (dist/pkg/cli/version.js), the package root is three directories up. */
const PACKAGE_JSON = new URL('../../../package.json', import.meta.url);

export class VersionError extends errorClass('VersionError', 'VERSION') {}

/** The `version` of the flotilla package.json at `url`; throws VersionError naming the file when it cannot. */
export async function readVersion(url: URL = PACKAGE_JSON): Promise<string> {
  let pkg: { name?: unknown; version?: unknown };
  try {
    pkg = JSON.parse(await readFile(url, 'utf8')) as typeof pkg;
  } catch (err: unknown) {
    throw new VersionError(
      `cannot read the version from ${fileURLToPath(url)}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  if (pkg.name !== 'flotilla' || typeof pkg.version !== 'string')
    throw new VersionError(
      `${fileURLToPath(url)} is not flotilla's package.json (name ${JSON.stringify(pkg.name)}, version ${JSON.stringify(pkg.version)})`,
    );
  return pkg.version;
}

export async function run(_flags: unknown, io: CommandIO): Promise<number> {
  io.stdout.write(`flotilla ${await readVersion()}\n`);
  return 0;
}
