import { writeFile } from 'node:fs/promises';
import { OPENAPI_PATH, renderOpenApiDocument } from './openapi-document.js';

await writeFile(OPENAPI_PATH, await renderOpenApiDocument());
console.log(`wrote ${OPENAPI_PATH}`);
