// Takes docs/inspector.png: the real service on a temp folder, one scripted turn with parallel
// fetches of a slow local page, a failed call and a repaired one, shown in headless Chromium.
// Run: npx tsx scripts/inspector-screenshot.ts
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/load-config.js';
import { createRuntime } from '../src/runtime.js';
import { launchChromium } from '../test/support/headless-chromium.js';

const site = createServer((request, response) => {
  setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end(`page ${request.url ?? ''}`), request.url === '/slow' ? 700 : 300);
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
const sitePort = (site.address() as AddressInfo).port;
const dataDir = await mkdtemp(path.join(tmpdir(), 'inspector-shot-'));
// mkdtemp makes it 0700; commands run as the sandbox user, who must pass through it, or the
// start-up probe turns run_command off and the picture shows it unavailable.
await chmod(dataDir, 0o711);
const runtime = await createRuntime({ config: loadConfig({ DATA_DIR: dataDir, WEB_FETCH_ALLOW_HOSTS: `127.0.0.1:${sitePort}` }), logger: pino({ level: 'silent' }) });
await runtime.app.listen({ host: '127.0.0.1', port: 0 });
const baseUrl = `http://127.0.0.1:${(runtime.app.server.address() as AddressInfo).port}`;
const page = (name: string) => `http://127.0.0.1:${sitePort}/${name}`;
try {
  const response = await fetch(`${baseUrl}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      agent: { id: 'acme-support', tools: { computer: true, web: true, todo: true } },
      input: 'Compare the two release pages and note what changed.',
      model: {
        script: [
          { text: 'Reading both release pages.', delayMs: 250, calls: [
            { name: 'web_fetch', arguments: { urls: [page('releases/1.4')] } },
            { name: 'web_fetch', arguments: { urls: [page('slow')] } },
            { name: 'read_file', arguments: { path: 'notes/changes.md' } },
          ] },
          { delayMs: 200, calls: [{ name: 'write_file', arguments: '{"path": "notes/changes.md", "content": "1.5: faster search\\n"' }] },
          { delayMs: 300, text: 'Done: notes/changes.md lists what changed in 1.5.' },
        ],
      },
    }),
  });
  const turn = (await response.json()) as { id: string };
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 720 }, deviceScaleFactor: 1 });
    await tab.goto(`${baseUrl}/ui/turns/${turn.id}`);
    await tab.waitForSelector('#timeline[data-turn-status="completed"]');
    await tab.screenshot({ path: path.resolve(import.meta.dirname, '../docs/inspector.png') });
  } finally {
    await browser.close();
  }
} finally {
  await runtime.app.close();
  site.close();
  await rm(dataDir, { recursive: true, force: true });
}
