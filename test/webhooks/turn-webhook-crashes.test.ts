import { afterAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { crashAt, crashRig, diedAt, onlyWebhookAbout, postAndForget } from '../support/crash-test.js';
import { getJson } from '../support/wait-until.js';

const rig = crashRig();

/**
 * A turn's webhook is stored with the turn and sent once it has ended, by whichever process is
 * there: the kill -9 comes between a turn's end and its webhook (TEST_CRASH_AT=turn.ended), or in
 * the middle of the turn; a new process under another INSTANCE_ID sends exactly one webhook.
 */
describe.each(rig.stores)('a turn webhook on %s and kill -9', (_store, storeEnv) => {
  const providers: FakeResponsesProvider[] = [];
  afterAll(async () => {
    await rig.close();
    await Promise.all(providers.map((provider) => provider.close()));
  });

  it.concurrent.each([
    ['between the end of a turn and its webhook', 'turn.completed'],
    ['in the middle of a turn', 'turn.interrupted'],
  ])('sends exactly one webhook after a crash %s (%s)', async (_when, type) => {
    const { receiver, env: webhookEnv } = await rig.receiver();
    const provider = await startFakeResponsesProvider();
    providers.push(provider);
    const agentId = type === 'turn.completed' ? 'ended-hook' : 'cut-hook';
    const env = { ...(await storeEnv()), ...webhookEnv, OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0' };
    const first = await rig.service({ instanceId: 'hook-crash-a', env: { ...env, ...(type === 'turn.completed' ? crashAt('turn.ended') : {}) } });
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

    const second = await rig.service({ instanceId: 'hook-crash-b', dataDir: first.dataDir, env });
    const [turn] = (await getJson(`${second.baseUrl}/turns?agentId=${agentId}`)).body.turns as { id: string; status: string }[];
    expect(turn).toBeDefined();
    const turnId = turn?.id ?? '';
    expect(await onlyWebhookAbout(receiver, turnId, 60_000)).toEqual({ type, id: turnId, agentId, status: type.slice('turn.'.length) });
    await second.stop();
  }, 120_000);
});
