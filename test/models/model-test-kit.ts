import { pino, type Logger } from 'pino';
import type { ModelClient, ModelRequest, ModelResponse } from '../../src/models/model-client.js';
import { createOpenAIResponsesModel, type OpenAIResponsesModelOptions } from '../../src/models/openai-responses-model.js';
import type { FakeResponsesProvider } from '../support/fake-responses-provider.js';

/** Looks like a real key so that both redaction paths (exact key, `sk-…` shape) are exercised. */
export const testApiKey = 'sk-test-4f9c2b7e1d-SECRET-value';

export interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** A pino logger that keeps what it logs, for assertions. */
export function recordingLogger(): { logger: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => records.push(JSON.parse(line) as LogRecord) });
  return { logger, records };
}

export interface TestModel {
  readonly model: ModelClient;
  /** Every wait the client asked for between attempts, in milliseconds. */
  readonly sleeps: number[];
  readonly records: LogRecord[];
}

/** The client under test, pointed at the fake, with waits recorded instead of slept. */
export function createTestModel(provider: FakeResponsesProvider, overrides: Partial<OpenAIResponsesModelOptions> = {}): TestModel {
  const sleeps: number[] = [];
  const { logger, records } = recordingLogger();
  const model = createOpenAIResponsesModel({
    apiKey: testApiKey,
    baseUrl: provider.baseUrl,
    model: 'fake-model',
    maxRetries: 3,
    requestTimeoutMs: 10_000,
    logger,
    random: () => 0.5,
    sleep: (ms, signal) => {
      sleeps.push(ms);
      signal.throwIfAborted();
      return Promise.resolve();
    },
    ...overrides,
  });
  return { model, sleeps, records };
}

export const userRequest: ModelRequest = {
  instructions: 'You are a test.',
  input: [{ type: 'message', role: 'user', content: 'Hello' }],
  tools: [],
  toolChoice: 'auto',
};

/** Calls the model and keeps the streamed deltas. */
export async function respondCollecting(
  model: ModelClient,
  request: ModelRequest = userRequest,
  signal: AbortSignal = new AbortController().signal,
): Promise<{ response: ModelResponse; deltas: string[] }> {
  const deltas: string[] = [];
  const response = await model.respond(request, { signal, onTextDelta: (delta) => deltas.push(delta) });
  return { response, deltas };
}
