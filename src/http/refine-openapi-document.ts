import { isJsonObject, type JsonObject } from '../json.js';
import { foldInputSchemas } from './fold-input-schemas.js';

/**
 * How the specs that define them spell the request headers the routes read. A route's header
 * schema can only have lowercase keys (Node lowercases the names it receives), so the generated
 * parameter is `idempotency-key`; the document names it as clients and the docs write it.
 */
const HEADER_SPELLINGS: ReadonlyMap<string, string> = new Map([
  ['idempotency-key', 'Idempotency-Key'],
  ['last-event-id', 'Last-Event-ID'],
]);

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
 * generator can use it: bearer security on every protected operation, header names spelled as
 * their specs spell them, one component where the provider's input twin says the same thing,
 * the streaming answers of `POST /turns` and `GET /turns/{id}/events` (SSE, NDJSON of
 * `TurnEvent`, JSON) with their headers, the turn event union's discriminator, and an example
 * request that works on any server. Each route names its own `operationId`: a name derived
 * from the path would change whenever the path does, and the generated clients with it.
 */
export function refineOpenApiDocument(document: JsonObject, options: { readonly publicPaths: readonly string[] }): JsonObject {
  const paths = objectAt(document, 'paths');
  for (const [path, item] of Object.entries(paths)) {
    if (!isJsonObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isJsonObject(operation)) continue;
      spellHeaderParameters(operation);
      const isPublic = options.publicPaths.some((publicPath) => path === publicPath || path.startsWith(`${publicPath}/`));
      operation['security'] = isPublic ? [] : [{ bearer: [] }];
    }
  }
  // Folded first, so the discriminator's mapping names the components that remain.
  foldInputSchemas(document);
  const schemas = objectAt(objectAt(document, 'components'), 'schemas');
  addDiscriminator(schemas, 'TurnEvent');
  // Only there once a request takes turn events and their input twin differs; a no-op until then.
  addDiscriminator(schemas, 'TurnEventInput');
  const securitySchemes = objectAt(objectAt(document, 'components'), 'securitySchemes');
  securitySchemes['bearer'] = { type: 'http', scheme: 'bearer', description: 'The `API_TOKEN` the server was started with; needed only when it has one.' };

  const createTurn = operationAt(paths, '/turns', 'post');
  if (createTurn !== undefined) refineCreateTurn(createTurn);
  const turnEvents = operationAt(paths, '/turns/{id}/events', 'get');
  if (turnEvents !== undefined) refineTurnEvents(turnEvents);
  for (const path of ['/workflows', '/background-jobs', '/schedules']) {
    const create = operationAt(paths, path, 'post');
    if (create !== undefined) refineDurableCreate(create);
  }
  return document;
}

/** A create of durable work answers `201` with the record, also on an idempotent retry (which says so). */
function refineDurableCreate(operation: JsonObject): void {
  const created = objectAt(objectAt(operation, 'responses'), '201');
  created['headers'] = {
    'idempotent-replayed': { description: '`true` on a retry with an `Idempotency-Key` that answered what an earlier request made (as it is now); absent on the request that made it.', schema: { type: 'string', enum: ['true'] } },
  };
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
  // `Idempotency-Key` and `Last-Event-ID` come from the route's header schema, which validates
  // them; `traceparent` is read but never validated, so only this says it is there.
  addHeaderParameter(operation, { in: 'header', name: 'traceparent', required: false, description: 'W3C trace context: the turn\'s spans join this trace.', schema: { type: 'string' } });
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

/** Renames the header parameters `HEADER_SPELLINGS` knows to their spelling. */
function spellHeaderParameters(operation: JsonObject): void {
  for (const parameter of parametersOf(operation)) {
    if (parameter['in'] !== 'header' || typeof parameter['name'] !== 'string') continue;
    parameter['name'] = HEADER_SPELLINGS.get(parameter['name'].toLowerCase()) ?? parameter['name'];
  }
}

/** Adds a header parameter unless the operation has one of that name in any case (HTTP header names are case-insensitive): the route's own wins. */
function addHeaderParameter(operation: JsonObject, parameter: JsonObject & { readonly name: string }): void {
  const parameters = parametersOf(operation);
  const name = parameter.name.toLowerCase();
  if (parameters.some((existing) => existing['in'] === 'header' && typeof existing['name'] === 'string' && existing['name'].toLowerCase() === name)) return;
  operation['parameters'] = [...parameters, parameter];
}

function parametersOf(operation: JsonObject): JsonObject[] {
  const parameters = operation['parameters'];
  return Array.isArray(parameters) ? parameters.filter(isJsonObject) : [];
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
