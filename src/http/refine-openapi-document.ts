import { isJsonObject, type JsonObject } from '../json.js';

/** Operation ids of the routes this file knows; any other route gets one from its method and path. */
const OPERATION_IDS: Readonly<Record<string, string>> = {
  'post /turns': 'createTurn',
  'get /turns': 'listTurns',
  'get /turns/{id}': 'getTurn',
  'get /turns/{id}/tools': 'getTurnTools',
  'get /turns/{id}/events': 'getTurnEvents',
  'post /turns/{id}/cancel': 'cancelTurn',
  'get /healthz': 'getHealth',
  'get /readyz': 'getReadiness',
  'get /metrics': 'getMetrics',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** The scripted turn the docs pre-fill: it runs on any server, no provider needed. */
export const SCRIPTED_TURN_EXAMPLE: JsonObject = {
  agent: { id: 'demo', tools: { todo: true } },
  input: 'Plan the release, then say what is next.',
  model: {
    script: [
      { text: 'Writing the plan.', calls: [{ name: 'todo', arguments: { todos: [{ content: 'Write release notes', status: 'in_progress' }, { content: 'Tag v1.2', status: 'pending' }] } }] },
      { text: 'Next: finish the release notes, then tag v1.2.' },
    ],
  },
};

const sseFraming = 'Server-Sent Events: each event is `id: <seq>`, `event: <type>`, `data: <the event as JSON>` (see `TurnEvent`); `: ping` comments keep the connection open.';

/**
 * What the route schemas cannot say about themselves, added to the generated document so a
 * generator can use it: an `operationId` per operation, bearer security on every protected
 * operation, the streaming answers of `POST /turns` and `GET /turns/{id}/events` (SSE, NDJSON
 * of `TurnEvent`, JSON) with their headers, the turn event union's discriminator, and an
 * example request that works on any server.
 */
export function refineOpenApiDocument(document: JsonObject, options: { readonly publicPaths: readonly string[] }): JsonObject {
  const paths = objectAt(document, 'paths');
  for (const [path, item] of Object.entries(paths)) {
    if (!isJsonObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isJsonObject(operation)) continue;
      operation['operationId'] ??= OPERATION_IDS[`${method} ${path}`] ?? derivedOperationId(method, path);
      const isPublic = options.publicPaths.some((publicPath) => path === publicPath || path.startsWith(`${publicPath}/`));
      operation['security'] = isPublic ? [] : [{ bearer: [] }];
    }
  }
  const schemas = objectAt(objectAt(document, 'components'), 'schemas');
  addDiscriminator(schemas, 'TurnEvent');
  addDiscriminator(schemas, 'TurnEventInput');
  const securitySchemes = objectAt(objectAt(document, 'components'), 'securitySchemes');
  securitySchemes['bearer'] = { type: 'http', scheme: 'bearer', description: 'The `API_TOKEN` the server was started with; needed only when it has one.' };

  const createTurn = operationAt(paths, '/turns', 'post');
  if (createTurn !== undefined) refineCreateTurn(createTurn);
  const turnEvents = operationAt(paths, '/turns/{id}/events', 'get');
  if (turnEvents !== undefined) refineTurnEvents(turnEvents);
  return document;
}

function refineCreateTurn(operation: JsonObject): void {
  const responses = objectAt(operation, 'responses');
  const ok = objectAt(responses, '200');
  const json = objectAt(objectAt(ok, 'content'), 'application/json');
  ok['description'] = 'The turn: streamed as it runs (SSE, NDJSON), or its record with every event once it has ended (JSON).';
  ok['headers'] = {
    'turn-id': { description: 'The id of the turn this request made (or, with `Idempotency-Key`, the turn that key made).', required: true, schema: { type: 'string' } },
    'idempotent-replayed': { description: '`true` on a retry with an `Idempotency-Key` that answered an existing turn; absent on the request that made it.', schema: { type: 'string', enum: ['true'] } },
  };
  // JSON first: the docs' "Try it out" then asks for it and shows the whole turn.
  ok['content'] = {
    'application/json': json,
    'text/event-stream': { schema: { type: 'string', description: sseFraming } },
    'application/x-ndjson': { schema: { $ref: '#/components/schemas/TurnEvent', description: 'One `TurnEvent` as JSON per line.' } },
  };
  const parameters = Array.isArray(operation['parameters']) ? operation['parameters'] : [];
  operation['parameters'] = [
    ...parameters,
    {
      in: 'header',
      name: 'Idempotency-Key',
      required: false,
      description: 'Makes the request safe to retry: the same key with the same body answers the turn it made (`idempotent-replayed: true`) instead of starting another; with another body it is `422 idempotency_key_reused`. 1–200 visible ASCII characters.',
      schema: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7E]+$' },
    },
    {
      in: 'header',
      name: 'Last-Event-ID',
      required: false,
      description: 'On an idempotent retry that streams: replay the stored events after this seq, then follow the turn live.',
      schema: { type: 'string', pattern: '^[0-9]+$' },
    },
    { in: 'header', name: 'traceparent', required: false, description: 'W3C trace context: the turn\'s spans join this trace.', schema: { type: 'string' } },
  ];
  const body = objectAt(objectAt(objectAt(operation, 'requestBody'), 'content'), 'application/json');
  body['example'] = SCRIPTED_TURN_EXAMPLE;
}

function refineTurnEvents(operation: JsonObject): void {
  const responses = objectAt(operation, 'responses');
  const ok = objectAt(responses, '200');
  const json = objectAt(objectAt(ok, 'content'), 'application/json');
  ok['headers'] = { 'turn-id': { description: 'The turn these events belong to (streams only).', schema: { type: 'string' } } };
  ok['content'] = {
    'text/event-stream': { schema: { type: 'string', description: `${sseFraming} The stream starts with a \`retry:\` field.` } },
    'application/x-ndjson': { schema: { $ref: '#/components/schemas/TurnEvent', description: 'One `TurnEvent` as JSON per line.' } },
    'application/json': json,
  };
}

/** `oneOf` over `$ref`s of event components, each with a `type` constant: a discriminated union. */
function addDiscriminator(schemas: JsonObject, name: string): void {
  const union = schemas[name];
  if (!isJsonObject(union) || !Array.isArray(union['oneOf'])) return;
  const mapping: JsonObject = {};
  for (const member of union['oneOf']) {
    const ref = isJsonObject(member) ? member['$ref'] : undefined;
    if (typeof ref !== 'string') return;
    const target = schemas[ref.split('/').pop() ?? ''];
    const type = isJsonObject(target) ? objectAt(objectAt(target, 'properties'), 'type')['const'] : undefined;
    if (typeof type !== 'string') return;
    mapping[type] = ref;
  }
  union['discriminator'] = { propertyName: 'type', mapping };
}

function derivedOperationId(method: string, path: string): string {
  const words = path.split('/').filter((segment) => segment !== '').map((segment) => segment.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) => (next ?? '').toUpperCase()));
  return method + words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
}

function operationAt(paths: JsonObject, path: string, method: string): JsonObject | undefined {
  const item = paths[path];
  const operation = isJsonObject(item) ? item[method] : undefined;
  return isJsonObject(operation) ? operation : undefined;
}

/** The object under `key`, created when absent. */
function objectAt(parent: JsonObject, key: string): JsonObject {
  const existing = parent[key];
  if (isJsonObject(existing)) return existing;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}
