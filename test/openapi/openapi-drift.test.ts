import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { OPENAPI_PATH, renderOpenApiDocument } from '../../scripts/openapi-document.js';

describe('openapi/openapi.json', () => {
  it('matches what the route schemas generate (run `npm run openapi` after changing a route)', async () => {
    const committed = await readFile(OPENAPI_PATH, 'utf8');
    expect(committed).toBe(await renderOpenApiDocument());
  });
});
