import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One static file of the inspector, read once at start-up. */
export interface InspectorAsset {
  readonly contentType: string;
  readonly body: string;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
};

/**
 * Reads the inspector's static files (the repository's `ui/` folder: plain HTML, CSS and
 * ES modules, no build step) into memory. Only the files found there are ever served, by
 * exact name, so no request path reaches the file system.
 */
export async function loadInspectorAssets(options: { readonly folder?: string } = {}): Promise<ReadonlyMap<string, InspectorAsset>> {
  const folder = options.folder ?? locateUiFolder();
  const assets = new Map<string, InspectorAsset>();
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES[path.extname(entry.name)];
    if (!entry.isFile() || contentType === undefined) continue;
    assets.set(entry.name, { contentType, body: await readFile(path.join(folder, entry.name), 'utf8') });
  }
  return assets;
}

/** `ui/` beside `src/` when run from source, or two levels up from `dist/src/inspector/` when compiled. */
function locateUiFolder(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../ui'), path.resolve(here, '../../../ui')];
  return candidates.find((candidate) => existsSync(path.join(candidate, 'index.html'))) ?? (candidates[0] as string);
}
