import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { runEvents, submitting, waitForRun } from './workflow-kit.js';

const SECRET = `whsec_${Buffer.from('workflow webhook test key').toString('base64')}`;

describe('the workflow tools and webhooks', () => {
  const runtimes: TestRuntime[] = [];
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.close()));
    for (const server of servers) server.close();
  });

  it('starts one run per tool call of a turn (the same call id in another turn starts another), whose task turns see only their own catalog, and sends its signed webhook', async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const runtime = await startTestRuntime({ env: { WEBHOOK_SECRET: SECRET, WEB_FETCH_ALLOW_HOSTS: `127.0.0.1:${port}` } });
    runtimes.push(runtime);

    const turnBody = {
      agent: { id: 'planner', tools: { workflows: true, todo: true } },
      input: 'compare the vendors',
      webhook: { url: `http://127.0.0.1:${port}/hooks` },
      model: {
        script: [
          {
            calls: [
              {
                name: 'workflow',
                callId: 'call_wf_1',
                arguments: { title: 'Compare vendors', script: "return Promise.all(args.vendors.map((v) => agent('Rate ' + v, { label: 'rate' })));", args: { vendors: ['acme', 'globex', 'initech'] } },
              },
            ],
          },
          { text: 'Started.' },
        ],
        tasks: { rate: submitting('rated: {{prompt}}') },
      },
    };
    const turns = [];
    for (let round = 0; round < 2; round += 1) {
      const response = await fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(turnBody) });
      turns.push(await readJson(response));
    }
    const outputs = turns.map((turn): any => turn.events.find((event: any): boolean => event.type === 'tool.completed'));
    expect(outputs[0].label).toBe('Started workflow “Compare vendors”');
    expect(turns[0].events.find((event: any): boolean => event.type === 'tool.started').label).toBe('Starting workflow “Compare vendors”');
    const [first, second] = outputs.map((output): any => JSON.parse(output.output));
    expect(first.status).toBe('running');
    // The scripted model's call ids repeat from turn to turn: the second turn's call is its own
    // (a run is keyed by turn and call), not a retry of the first's.
    expect(second.run_id).not.toBe(first.run_id);
    const listed = await readJson(await fetch(`${runtime.baseUrl}/workflows?agentId=planner`));
    expect(listed.workflows).toHaveLength(2);

    const run = await waitForRun(runtime.baseUrl, first.run_id);
    expect(run).toMatchObject({ status: 'completed', result: ['rated: Rate acme', 'rated: Rate globex', 'rated: Rate initech'], sourceTurnId: turns[0].id, sourceCallId: 'call_wf_1' });
    const events = await runEvents(runtime.baseUrl, run.id);
    for (const started of events.filter((event) => event.type === 'task.started')) {
      const tools = await readJson(await fetch(`${runtime.baseUrl}/turns/${started.turnId}/tools`));
      expect(tools.kind).toBe('workflow_task');
      // The fixed task catalog: the server's web tools and submit_result, never the main turn's.
      expect(tools.tools.map((tool: { name: string }) => tool.name)).toEqual(['web_fetch', 'submit_result']);
    }
    const mainTools = await readJson(await fetch(`${runtime.baseUrl}/turns/${turns[0].id}/tools`));
    expect(mainTools.tools.map((tool: { name: string }) => tool.name)).toEqual(['todo', 'workflow', 'show_workflow', 'list_workflows', 'cancel_workflow']);

    // The run inherits its turn's webhook: one workflow.completed, signed, shown in the run's events.
    const verifier = new Webhook(SECRET);
    for (;;) {
      const latest = await runEvents(runtime.baseUrl, run.id);
      if (latest.some((event) => event.type === 'webhook.attempted')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const bodies = received.map((delivery): unknown =>
      verifier.verify(delivery.body, { 'webhook-id': String(delivery.headers['webhook-id']), 'webhook-timestamp': String(delivery.headers['webhook-timestamp']), 'webhook-signature': String(delivery.headers['webhook-signature']) }),
    );
    expect(bodies).toContainEqual({ type: 'workflow.completed', id: run.id, agentId: 'planner', status: 'completed' });
    expect(bodies.filter((body: any) => body.type === 'turn.completed')).toHaveLength(2);
    const attempted = (await runEvents(runtime.baseUrl, run.id)).find((event) => event.type === 'webhook.attempted');
    expect(attempted).toMatchObject({ outcome: 'delivered', statusCode: 200, attempt: 1 });
  });
});
