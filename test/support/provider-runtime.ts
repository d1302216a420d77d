import { afterAll, beforeAll } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from './fake-responses-provider.js';
import { startTestRuntime, type TestRuntime } from './test-runtime.js';

/** A fake Responses provider and a runtime that uses it as its model, for one `describe`. */
export interface ProviderRuntime {
  readonly provider: FakeResponsesProvider;
  readonly runtime: TestRuntime;
}

/**
 * Starts both before the suite's tests (no retries, so each request the test expects is one
 * request the provider sees) and closes them after; read the fields inside tests.
 */
export function useProviderRuntime(): ProviderRuntime {
  const started: { provider?: FakeResponsesProvider; runtime?: TestRuntime } = {};
  beforeAll(async () => {
    started.provider = await startFakeResponsesProvider();
    started.runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: started.provider.baseUrl, OPENAI_API_KEY: 'sk-test-secret', MODEL_MAX_RETRIES: '0' } });
  });
  afterAll(async () => {
    await started.runtime?.close();
    await started.provider?.close();
  });
  return {
    get provider() {
      if (started.provider === undefined) throw new Error('the provider starts before the tests');
      return started.provider;
    },
    get runtime() {
      if (started.runtime === undefined) throw new Error('the runtime starts before the tests');
      return started.runtime;
    },
  };
}
