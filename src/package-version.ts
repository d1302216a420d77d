import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'turn-runtime';

/**
 * The `version` of this service's package.json, read once at start-up. This module runs as
 * `src/package-version.ts` from source (tsx, vitest) and as `dist/src/package-version.js` when
 * compiled, so the package.json is one or two folders up: rather than guess the depth, walk up
 * to the first package.json named `turn-runtime` (one of a dependency's would name itself).
 * `unknown` when there is none, e.g. a bundle copied without it: a version is not worth
 * refusing to start over.
 */
export const PACKAGE_VERSION: string = findPackageVersion(path.dirname(fileURLToPath(import.meta.url)));

/** `turn-runtime/<version>`: what the service's own outgoing requests call themselves. */
export const SERVICE_USER_AGENT = `${PACKAGE_NAME}/${PACKAGE_VERSION}`;

export function findPackageVersion(from: string): string {
  for (let folder = from; ; folder = path.dirname(folder)) {
    const version = versionIn(path.join(folder, 'package.json'));
    if (version !== undefined) return version;
    if (path.dirname(folder) === folder) return 'unknown';
  }
}

function versionIn(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const manifest: unknown = JSON.parse(text);
    if (typeof manifest !== 'object' || manifest === null) return undefined;
    const { name, version } = manifest as { name?: unknown; version?: unknown };
    return name === PACKAGE_NAME && typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}
