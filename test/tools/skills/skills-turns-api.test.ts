import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCommandSandbox } from '../../../src/sandbox/detect-sandbox.js';
import { REPOSITORY_ROOT, startTestMcpHttpServer, stdioTestServer, type TestMcpHttpServer } from '../../support/mcp-test-server.js';
import { readJson, startTestRuntime, type TestRuntime } from '../../support/test-runtime.js';
import { skillMarkdown, tempFolder, writeSkill } from './skill-test-kit.js';

interface TurnEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** Whether bubblewrap runs here (installed, with user namespaces): the mcporter test needs it. */
const bwrapWorks = existsSync('/usr/bin/bwrap')
  ? (await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: pino({ level: 'silent' }) })) !== undefined
  : false;

const CONFIG_INSIDE = '/home/agent/.mcporter/skill-inventory.json';

async function postTurn(runtime: TestRuntime, body: unknown): Promise<{ status: number; body: any; turnId: string | null }> {
  const response = await fetch(`${runtime.baseUrl}/turns`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await readJson(response), turnId: response.headers.get('turn-id') };
}

function completed(events: readonly TurnEvent[], callId: string): TurnEvent | undefined {
  return events.find((event) => (event.type === 'tool.completed' || event.type === 'tool.failed') && event['callId'] === callId);
}

describe('skills through the HTTP API', () => {
  let files: Awaited<ReturnType<typeof tempFolder>>;
  let runtime: TestRuntime;

  beforeAll(async () => {
    files = await tempFolder('skills-api-');
    const skills = path.join(files.folder, 'skills');
    await writeSkill(skills, 'release-notes', skillMarkdown('name: release-notes\ndescription: Writes release notes from merged pull requests.', '# Release notes\n\nGroup the changes by area; follow references/style.md.\n'), {
      'references/style.md': '# Style\n\nPlain words.\n',
    });
    await writeSkill(
      skills,
      'inventory',
      skillMarkdown('name: inventory\ndescription: Answers questions about stock in the Acme warehouse.\nmetadata:\n  mcp-servers: acme', '# Inventory\n\nLook the item up with the acme lookup tool before answering.\n'),
    );
    const mcpConfig = path.join(files.folder, 'mcp.json');
    // No events file: inside the sandbox the server could not write to this process's /tmp.
    await writeFile(mcpConfig, JSON.stringify({ servers: { acme: stdioTestServer({ inSandbox: true }) } }));
    runtime = await startTestRuntime({
      // The test server runs from this repository (node --import tsx …), so commands must see it, read-only.
      env: { SKILLS_DIR: skills, MCP_CONFIG_FILE: mcpConfig, SANDBOX_READ_ONLY_PATHS: REPOSITORY_ROOT },
    });
  });
  afterAll(async () => {
    await runtime.close();
    await files.remove();
  });

  it('offers use_skill with an enum of the enabled skills, recorded as sent', async () => {
    const { status, turnId } = await postTurn(runtime, { agent: { id: 'writer', tools: { skills: ['release-notes', 'inventory', 'release-notes'] } }, input: 'hi', model: { script: [{ text: 'hello' }] } });
    expect(status).toBe(200);
    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId ?? ''}/tools`));
    const tool = (record.tools as { name: string }[]).find((candidate) => candidate.name === 'use_skill');
    expect(tool).toMatchObject({
      strict: true,
      executionMode: 'parallel',
      isReadOnly: true,
      parameters: { type: 'object', properties: { name: { type: 'string', enum: ['release-notes', 'inventory'] } }, required: ['name'] },
    });
    expect((tool as unknown as { description: string }).description).toContain(
      '- release-notes: Writes release notes from merged pull requests.\n- inventory: Answers questions about stock in the Acme warehouse.',
    );
    expect((record.providerTools as { name: string }[]).map((provider) => provider.name)).toEqual(['use_skill']);
  });

  it('runs a turn that opens a skill and reads its body; without computer its files and MCP tools are said to be unavailable', async () => {
    const { status, body } = await postTurn(runtime, {
      agent: { id: 'writer', tools: { skills: ['release-notes', 'inventory'] } },
      input: 'write the notes',
      model: { script: [{ calls: [{ name: 'use_skill', arguments: { name: 'release-notes' }, callId: 'notes' }, { name: 'use_skill', arguments: { name: 'inventory' }, callId: 'stock' }] }, { text: 'done' }] },
    });
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    const events = body.events as TurnEvent[];
    expect(events.find((event) => event.type === 'tool.started' && event['callId'] === 'notes')).toMatchObject({ label: 'Opening skill release-notes', executionMode: 'parallel' });
    const notes = completed(events, 'notes');
    expect(notes).toMatchObject({ type: 'tool.completed', label: 'Opened skill release-notes' });
    expect(notes?.['output']).toBe(
      '# Release notes\n\nGroup the changes by area; follow references/style.md.\n\n## Files of this skill\n\n' +
        'This skill comes with 1 file (references/style.md), but they are not available in this turn: it has no computer tools.',
    );
    expect(completed(events, 'stock')?.['output']).toContain(
      'This skill uses the MCP server "acme", whose tools are not available in this turn: they are called with mcporter through run_command, and this turn has no computer tools.',
    );
  });

  it('answers 400 for a skill that does not exist, creating no turn', async () => {
    const { status, body, turnId } = await postTurn(runtime, { agent: { id: 'writer', tools: { skills: ['release-notes', 'ghost'] } }, input: 'hi', model: { script: [{ text: 'hello' }] } });
    expect(status).toBe(400);
    expect(turnId).toBeNull();
    expect(body.error).toEqual({
      code: 'invalid_request',
      message: 'agent.tools.skills.1: no skill named "ghost" is available on this server',
      issues: [{ path: ['agent', 'tools', 'skills', 1], message: 'no skill named "ghost" is available on this server' }],
    });
  });

  it.runIf(bwrapWorks)('runs the skill\'s MCP tool with the real mcporter from run_command in the bubblewrap sandbox', async () => {
    const { status, body } = await postTurn(runtime, {
      agent: { id: 'stock-agent', tools: { computer: true, skills: ['inventory'] } },
      input: 'how many of item 42 are in stock?',
      model: {
        script: [
          { calls: [{ name: 'use_skill', arguments: { name: 'inventory' }, callId: 'open' }] },
          { calls: [{ name: 'run_command', arguments: { command: `mcporter list --config ${CONFIG_INSIDE} acme --schema` }, callId: 'list' }] },
          { calls: [{ name: 'run_command', arguments: { command: `mcporter call --config ${CONFIG_INSIDE} acme.lookup id=42` }, callId: 'call' }] },
          { text: 'widget-42: 3 in stock' },
        ],
      },
    });
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    const events = body.events as TurnEvent[];
    expect(events[0]?.['tools']).toEqual(expect.arrayContaining(['run_command', 'use_skill']));

    const opened = String(completed(events, 'open')?.['output']);
    expect(opened).toContain('# Inventory\n\nLook the item up with the acme lookup tool before answering.');
    expect(opened).toContain(`mcporter list --config ${CONFIG_INSIDE} acme --schema`);
    expect(opened).toContain(`mcporter call --config ${CONFIG_INSIDE} acme.<tool> key=value`);

    const listed = completed(events, 'list');
    expect(listed?.['type']).toBe('tool.completed');
    expect(listed?.['output']).toContain('function lookup(id: number);');

    const called = completed(events, 'call');
    expect(called?.['type']).toBe('tool.completed');
    expect(called?.['output']).toContain('"name": "widget-42"');
    expect(called?.['output']).toContain('"stock": 3');

    const configFile = path.join(runtime.dataDir, 'agents', 'stock-agent', 'home', '.mcporter', 'skill-inventory.json');
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    const config = JSON.parse(await readFile(configFile, 'utf8'));
    expect(Object.keys(config.mcpServers)).toEqual(['acme']);
    expect(config.imports).toEqual([]);
  });
});

describe.runIf(bwrapWorks)('a skill whose MCP server speaks Streamable HTTP', () => {
  let files: Awaited<ReturnType<typeof tempFolder>>;
  let httpServer: TestMcpHttpServer;
  let runtime: TestRuntime;

  beforeAll(async () => {
    files = await tempFolder('skills-http-');
    httpServer = await startTestMcpHttpServer();
    const skills = path.join(files.folder, 'skills');
    await writeSkill(skills, 'remote-stock', skillMarkdown('name: remote-stock\ndescription: Stock, over HTTP.\nmetadata:\n  mcp-servers: remote'));
    const mcpConfig = path.join(files.folder, 'mcp.json');
    await writeFile(mcpConfig, JSON.stringify({ servers: { remote: { transport: 'http', url: httpServer.url, headers: { 'x-acme-key': 'configured-key' } } } }));
    runtime = await startTestRuntime({ env: { SKILLS_DIR: skills, MCP_CONFIG_FILE: mcpConfig, COMMAND_ALLOW_NETWORK: 'true' } });
  });
  afterAll(async () => {
    await runtime.close();
    await httpServer.close();
    await files.remove();
  });

  it('is called with mcporter from a sandbox that has the network, with the configured headers', async () => {
    const config = '/home/agent/.mcporter/skill-remote-stock.json';
    const { body } = await postTurn(runtime, {
      agent: { id: 'remote-agent', tools: { computer: true, skills: ['remote-stock'] } },
      input: 'item 7?',
      model: {
        script: [
          { calls: [{ name: 'use_skill', arguments: { name: 'remote-stock' }, callId: 'open' }] },
          { calls: [{ name: 'run_command', arguments: { command: `mcporter call --config ${config} remote.lookup id=7` }, callId: 'call' }] },
        ],
      },
    });
    const events = body.events as TurnEvent[];
    expect(completed(events, 'open')?.['output']).toContain(`mcporter call --config ${config} remote.<tool> key=value`);
    expect(completed(events, 'call')?.['output']).toContain('"name": "widget-7"');
    await httpServer.waitForEvent('called lookup 7');
    expect(httpServer.firstHeaders?.['x-acme-key']).toBe('configured-key');
  });
});

describe('skills on a server without SKILLS_DIR', () => {
  it('answers 400 for any requested skill', async () => {
    const runtime = await startTestRuntime();
    try {
      const { status, body, turnId } = await postTurn(runtime, { agent: { id: 'a1', tools: { skills: ['release-notes'] } }, input: 'hi', model: { script: [{ text: 'hello' }] } });
      expect(status).toBe(400);
      expect(turnId).toBeNull();
      expect(body.error.issues).toEqual([{ path: ['agent', 'tools', 'skills', 0], message: 'no skill named "release-notes": this server has no skills (SKILLS_DIR is not set or holds none)' }]);
      const { status: okStatus, body: okBody } = await postTurn(runtime, { agent: { id: 'a1', tools: { skills: [] } }, input: 'hi', model: { script: [{ text: 'hello' }] } });
      expect(okStatus).toBe(200);
      expect((okBody.events as TurnEvent[])[0]?.['tools']).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});
