import { afterAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { crashAt, crashStores, diedAt, postAndForget } from '../support/crash-test.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { getJson, waitUntil } from '../support/wait-until.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from '../support/webhook-receiver.js';

const { stores: STORES, dropSchemas } = crashStores();

/**
 * A turn's webhook is stored with the turn and sent once it has ended, by whichever process is
 * there: the kill -9 comes between a turn's end and its webhook (TEST_CRASH_AT=turn.ended), or in
 * the middle of the turn; a new process under another INSTANCE_ID sends exactly one webhook.
 */
describe.each(STORES)('a turn webhook on %s and kill -9', (_store, storeEnv) => {
  const processes: ServiceProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  const providers: FakeResponsesProvider[] = [];
  afterAll(async () => {
    for (const service of processes) await service.stop();
    await Promise.all([...receivers.map((receiver) => receiver.close()), ...providers.map((provider) => provider.close())]);
    await dropSchemas();
  });

  const deliveriesFor = (receiver: WebhookReceiver, turnId: string) => receiver.received.filter((delivery) => (JSON.parse(delivery.body) as { id: string }).id === turnId);

  it.concurrent.each([
    ['between the end of a turn and its webhook', 'turn.completed'],
    ['in the middle of a turn', 'turn.interrupted'],
  ])('sends exactly one webhook after a crash %s (%s)', async (_when, type) => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const provider = await startFakeResponsesProvider();
    providers.push(provider);
    const agentId = type === 'turn.completed' ? 'ended-hook' : 'cut-hook';
    const env = { ...(await storeEnv()), WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host, OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0' };
    const first = await startServiceProcess({ instanceId: 'hook-crash-a', env: { ...env, ...(type === 'turn.completed' ? crashAt('turn.ended') : {}) } });
    processes.push(first);
    if (type === 'turn.completed') {
      postAndForget(`${first.baseUrl}/turns`, { agent: { id: agentId }, input: 'hi', model: { script: [{ text: 'done' }] }, webhook: { url: receiver.url } });
      await diedAt(first, 'turn.ended');
    } else {
      // The model never answers: the process dies while the turn waits for it.
      provider.enqueue({ text: 'never', headersDelayMs: 120_000 });
      postAndForget(`${first.baseUrl}/turns`, { agent: { id: agentId }, input: 'hi', model: { name: 'fake-model' }, webhook: { url: receiver.url } });
      await provider.waitForRequest(1);
      await first.crash();
    }
    expect(receiver.received).toEqual([]);

    const second = await startServiceProcess({ instanceId: 'hook-crash-b', dataDir: first.dataDir, env });
    processes.push(second);
    const [turn] = (await getJson(`${second.baseUrl}/turns?agentId=${agentId}`)).body.turns as { id: string; status: string }[];
    expect(turn).toBeDefined();
    const turnId = turn?.id ?? '';
    await waitUntil('the webhook', () => (deliveriesFor(receiver, turnId).length > 0 ? true : undefined), 60_000);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const deliveries = deliveriesFor(receiver, turnId);
    expect(deliveries).toHaveLength(1);
    expect(JSON.parse(deliveries[0]?.body ?? '{}')).toEqual({ type, id: turnId, agentId, status: type.slice('turn.'.length) });
    await second.stop();
  }, 120_000);
});
