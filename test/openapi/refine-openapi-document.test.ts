import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/json.js';
import { refineOpenApiDocument } from '../../src/http/refine-openapi-document.js';

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const strictObject = (properties: JsonObject): JsonObject => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
const looseObject = (properties: JsonObject): JsonObject => ({ type: 'object', properties, required: Object.keys(properties) });
const event = (type: string): JsonObject => strictObject({ type: { type: 'string', const: type } });

/** A document shaped as `@fastify/type-provider-zod` writes it: every registered schema twice. */
function generatedDocument(): JsonObject {
  return {
    openapi: '3.1.0',
    paths: {
      '/notes': {
        post: {
          operationId: 'createNote',
          parameters: [{ in: 'header', name: 'idempotency-key', required: false, schema: { type: 'string' } }],
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { tag: ref('TagInput'), page: ref('PageInput') } } } } },
          responses: { 200: { content: { 'application/json': { schema: ref('Note') } } } },
        },
      },
      '/notes/{id}/events': {
        get: {
          operationId: 'getNoteEvents',
          parameters: [{ in: 'header', name: 'last-event-id', required: false, schema: { type: 'string' } }],
          responses: { 200: { content: { 'application/json': { schema: { type: 'array', items: ref('TurnEvent') } } } } },
        },
      },
    },
    components: {
      schemas: {
        // Used by the request and the same in both directions: folds into `Tag`.
        Tag: { type: 'string', maxLength: 20 },
        TagInput: { type: 'string', maxLength: 20 },
        // Used by the request, with a default on input only: both stay, and `PageInput` keeps pointing at `TagInput`'s fold.
        Page: { type: 'object', properties: { size: { type: 'integer' }, tag: ref('Tag') }, required: ['size', 'tag'] },
        PageInput: { type: 'object', properties: { size: { type: 'integer', default: 10 }, tag: ref('TagInput') }, required: ['tag'] },
        // Answers only: their input twins describe nothing an operation takes.
        Note: strictObject({ text: { type: 'string' } }),
        NoteInput: looseObject({ text: { type: 'string' } }),
        TurnEvent: { oneOf: [ref('StartedEvent'), ref('EndedEvent')] },
        TurnEventInput: { oneOf: [ref('StartedEventInput'), ref('EndedEventInput')] },
        StartedEvent: event('started'),
        StartedEventInput: event('started'),
        EndedEvent: event('ended'),
        EndedEventInput: event('ended'),
      },
    },
  };
}

describe('refineOpenApiDocument', () => {
  it('folds input twins that say what their output says, keeps those that differ, and drops those no operation uses', () => {
    const document = refineOpenApiDocument(generatedDocument(), { publicPaths: [] });
    const schemas = (document['components'] as JsonObject)['schemas'] as JsonObject;
    expect(Object.keys(schemas).sort()).toEqual(['EndedEvent', 'Note', 'Page', 'PageInput', 'StartedEvent', 'Tag', 'TurnEvent']);
    const body = JSON.stringify((((document['paths'] as JsonObject)['/notes'] as JsonObject)['post'] as JsonObject)['requestBody']);
    expect(body).toContain('#/components/schemas/Tag"');
    expect(body).toContain('#/components/schemas/PageInput"');
    expect(schemas['PageInput']).toMatchObject({ properties: { tag: ref('Tag') } });
    expect(schemas['TurnEvent']).toMatchObject({ discriminator: { propertyName: 'type', mapping: { started: '#/components/schemas/StartedEvent', ended: '#/components/schemas/EndedEvent' } } });
  });

  it('folds twins that only differ through each other: a union over event twins used by a request', () => {
    const generated = generatedDocument();
    const events = (((generated['paths'] as JsonObject)['/notes/{id}/events'] as JsonObject)['get'] as JsonObject);
    events['requestBody'] = { content: { 'application/json': { schema: ref('TurnEventInput') } } };
    const document = refineOpenApiDocument(generated, { publicPaths: [] });
    const schemas = (document['components'] as JsonObject)['schemas'] as JsonObject;
    expect(Object.keys(schemas).filter((name) => name.includes('Event')).sort()).toEqual(['EndedEvent', 'StartedEvent', 'TurnEvent']);
    expect(JSON.stringify(events['requestBody'])).toContain('#/components/schemas/TurnEvent"');
  });

  it('keeps a differing event union twin a request uses, with its own discriminator', () => {
    const generated = generatedDocument();
    const generatedSchemas = (generated['components'] as JsonObject)['schemas'] as JsonObject;
    generatedSchemas['EndedEventInput'] = looseObject({ type: { type: 'string', const: 'ended' } });
    const events = (((generated['paths'] as JsonObject)['/notes/{id}/events'] as JsonObject)['get'] as JsonObject);
    events['requestBody'] = { content: { 'application/json': { schema: ref('TurnEventInput') } } };
    const schemas = (refineOpenApiDocument(generated, { publicPaths: [] })['components'] as JsonObject)['schemas'] as JsonObject;
    expect(schemas['TurnEventInput']).toEqual({
      oneOf: [ref('StartedEvent'), ref('EndedEventInput')],
      discriminator: { propertyName: 'type', mapping: { started: '#/components/schemas/StartedEvent', ended: '#/components/schemas/EndedEventInput' } },
    });
  });

  it('spells the request headers as their specs do, once each', () => {
    const paths = refineOpenApiDocument(generatedDocument(), { publicPaths: [] })['paths'] as JsonObject;
    const headerNames = (path: string, method: string) => ((((paths[path] as JsonObject)[method] as JsonObject)['parameters'] as JsonObject[]).map((parameter) => parameter['name']));
    expect(headerNames('/notes', 'post')).toEqual(['Idempotency-Key']);
    expect(headerNames('/notes/{id}/events', 'get')).toEqual(['Last-Event-ID']);
  });
});
