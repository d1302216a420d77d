import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import type { JsonObject } from '../../src/json.js';
import { createTextCompletionPolicy } from '../../src/loop/completion-policy.js';
import { runTurnLoop, type LoopOutcome } from '../../src/loop/run-turn-loop.js';
import type { ProviderToolList, ToolCatalog } from '../../src/tools/tool-catalog.js';
import type { ModelClient, ModelRequest } from '../../src/models/model-client.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../src/tools/define-worker-tool.js';
import { resultText } from '../../src/tools/tool-result.js';
import type { TurnEventBody } from '../../src/events/turn-events.js';

export const silentLogger = pino({ level: 'silent' });

/** Shared, so its validator is compiled once (schemas are memoised per object). */
const NO_PARAMETERS: JsonObject = { type: 'object', properties: {}, additionalProperties: false };

/** A tool as a source would define it; deferred unless told otherwise. Records its calls. */
export function sampleTool(options: {
  readonly name: string;
  readonly description?: string;
  readonly namespace?: string;
  readonly namespaceDescription?: string;
  readonly deferLoading?: boolean;
  readonly parameters?: JsonObject;
  readonly calls?: JsonObject[];
}): WorkerAgentTool {
  return defineWorkerTool<JsonObject>({
    name: options.name,
    description: options.description ?? `The ${options.name} tool.`,
    jsonSchema: options.parameters ?? NO_PARAMETERS,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.namespaceDescription === undefined ? {} : { namespaceDescription: options.namespaceDescription }),
    deferLoading: options.deferLoading ?? true,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: () => `Running ${options.name}`,
    execute: (params) => {
      options.calls?.push(params);
      return Promise.resolve({ content: `${options.namespace ?? ''}.${options.name} ran` });
    },
  });
}

/** A small calendar / CRM / chat catalog, with CJK descriptions on the chat side. */
export function sampleCatalogTools(): WorkerAgentTool[] {
  const calendar = { namespace: 'calendar', namespaceDescription: 'Calendar tools: events, invitations and free time.' };
  const crm = { namespace: 'crm', namespaceDescription: 'Customer relationship management: customers, orders, invoices.' };
  const chat = { namespace: 'chat', namespaceDescription: '团队聊天：频道和消息。' };
  return [
    sampleTool({ ...calendar, name: 'create_event', description: 'Create an event in the calendar.', parameters: { type: 'object', properties: { title: { type: 'string' }, start_time: { type: 'string' } } } }),
    sampleTool({ ...calendar, name: 'list_events', description: 'List events between two dates.' }),
    sampleTool({ ...calendar, name: 'find_free_time', description: 'Find a free slot for a meeting.' }),
    sampleTool({ ...crm, name: 'list_orders', description: 'List the open orders of a customer.', parameters: { type: 'object', properties: { customer_id: { type: 'string' } } } }),
    sampleTool({ ...crm, name: 'send_invoice', description: 'Send an invoice to a customer by email.' }),
    sampleTool({ ...chat, name: 'post_message', description: '在频道中发送一条消息。' }),
    sampleTool({ ...chat, name: 'list_channels', description: '列出所有频道。' }),
    sampleTool({ name: 'send_fax', description: 'Send a fax to a phone number.' }),
  ];
}

const toolContext = { signal: new AbortController().signal, callId: 'call_test', logger: silentLogger, present: () => undefined, reportStopped: () => undefined };

/** Runs a catalog's `tool_search` as the loop would (validation first); throws what the tool throws. */
export async function runToolSearch(catalog: ToolCatalog, args: unknown): Promise<{ text: string; details: JsonObject | undefined; label: string; completed: string | undefined }> {
  const search = catalog.callable().get('tool_search');
  if (search === undefined) throw new Error('this catalog has no tool_search');
  const checked = search.checkArguments(args);
  if (!checked.ok) throw new Error(`invalid arguments: ${JSON.stringify(checked.issues)}`);
  const result = await search.execute(checked.params, toolContext);
  return {
    text: resultText(result.content),
    details: result.details,
    label: search.describeActivity(checked.params),
    completed: search.describeCompletedActivity?.(checked.params, result),
  };
}

/** The names of a provider tool list, namespaces as `namespace.{children}`. */
export function providerNames(list: ProviderToolList): string[] {
  return list.tools.map((tool) => {
    if (tool['type'] === 'namespace') {
      const children = (tool['tools'] as JsonObject[]).map((child) => child['name'] as string);
      return `${tool['name'] as string}.{${children.join(',')}}`;
    }
    return typeof tool['name'] === 'string' ? tool['name'] : `{${tool['type'] as string}}`;
  });
}

/** A model that records every request (the tool lists as sent) before delegating. */
export function recordingModel(model: ModelClient): { model: ModelClient; requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    model: {
      model: model.model,
      respond: (request, call) => {
        requests.push(structuredClone(request));
        return model.respond(request, call);
      },
    },
  };
}

export interface LoopRun {
  readonly outcome: LoopOutcome;
  readonly events: TurnEventBody[];
  readonly changes: { iteration: number; list: ProviderToolList }[];
}

/** The real loop over a catalog. */
export async function runCatalogLoop(options: { readonly model: ModelClient; readonly catalog: ToolCatalog }): Promise<LoopRun> {
  const events: TurnEventBody[] = [];
  const changes: { iteration: number; list: ProviderToolList }[] = [];
  const outcome = await runTurnLoop({
    model: options.model,
    input: [{ type: 'message', role: 'user', content: 'Book a meeting.' }],
    catalog: options.catalog,
    onProviderToolsChanged: (iteration, list) => changes.push({ iteration, list }),
    completion: createTextCompletionPolicy(),
    maxIterations: 8,
    toolTimeoutMs: 5_000,
    parallelLimit: 4,
    signal: new AbortController().signal,
    emit: (event) => events.push(event),
    logger: silentLogger,
    clock: systemClock,
  });
  return { outcome, events, changes };
}
