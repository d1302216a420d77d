import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { BRAIN_LIMITS } from '../src/brain/brain-page.js';
import { pageNotFound } from '../src/brain/brain-errors.js';
import type { BrainStore } from '../src/brain/brain-store.js';
import { makeSnippet } from '../src/brain/make-snippet.js';
import { checkPageReference } from '../src/brain/page-reference.js';
import { normalizeTags, pageContentSchema, pageTagsSchema, pageTitleSchema } from '../src/brain/page-input-schemas.js';
import { recallPages } from '../src/brain/recall-pages.js';
import type { Clock } from '../src/clock.js';
import { commonErrorResponses, errorEnvelopeSchema } from '../src/http/error-envelope.js';
import { AGENT_ID_PATTERN } from '../src/turns/turn-request.js';

export interface BrainRoutesOptions {
  readonly brain: BrainStore;
  readonly clock: Clock;
}

const agentId = z.string().regex(AGENT_ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$');
const reference = z
  .string()
  .max(BRAIN_LIMITS.referenceChars * 4)
  .superRefine((value, context) => {
    const checked = checkPageReference(value);
    if (!checked.ok) context.addIssue({ code: 'custom', message: checked.problem });
  })
  .describe('1–128 letters (any script), digits, `_`, `.`, `-`; starts with a letter or digit; no `..`. NFC-normalised.');
const agentParams = z.object({ agentId });
const pageParams = z.object({ agentId, reference });

const pageSchema = z
  .object({ reference: z.string(), title: z.string(), content: z.string(), tags: z.array(z.string()), updatedAt: z.string() })
  .meta({ id: 'BrainPage' });

const pageBodySchema = z.strictObject({ title: pageTitleSchema, content: pageContentSchema, tags: pageTagsSchema.optional() });

const searchQuerySchema = z.strictObject({
  query: z.string().trim().max(BRAIN_LIMITS.queryChars).optional().describe('Full-text query; without one, the most recently updated pages.'),
  limit: z.coerce.number().int().min(1).max(BRAIN_LIMITS.maxResults).default(10),
  budget_tokens: z.coerce
    .number()
    .int()
    .min(BRAIN_LIMITS.minBudgetTokens)
    .optional()
    .describe(`With a query: the answer's budget in estimated tokens (default ${BRAIN_LIMITS.defaultBudgetTokens}; over ${BRAIN_LIMITS.maxBudgetTokens} is clamped).`),
});

const searchAnswerSchema = z.object({
  pages: z.array(
    z.object({
      reference: z.string(),
      title: z.string(),
      snippet: z.string(),
      score: z.number().nullable().describe('Higher is better; comparable within one answer only. Null when listing without a query.'),
      tags: z.array(z.string()),
      updatedAt: z.string(),
    }),
  ),
  matched: z.number().int().describe('Pages that matched (with a query), including those the budget left out; else the number listed.'),
  budgetTokens: z.number().int().nullable(),
});

const LISTING_SNIPPET_CHARS = 240;

/** The Brain over HTTP: list and search, read, write and delete an agent's pages. */
export const brainRoutes: FastifyPluginAsyncZod<BrainRoutesOptions> = async (app, { brain, clock }) => {
  app.get(
    '/agents/:agentId/brain/pages',
    {
      schema: {
        summary: "Search or list an agent's pages",
        description:
          'With `query`: ranked full-text search (English, Chinese, Japanese …), each page with a snippet around what matched, the whole answer within `budget_tokens`. Without: the most recently updated pages.',
        tags: ['brain'],
        operationId: 'searchBrainPages',
        params: agentParams,
        querystring: searchQuerySchema,
        response: { 200: searchAnswerSchema, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { query, limit } = request.query;
      const { agentId: id } = request.params;
      if (query === undefined || query === '') {
        const pages = await brain.listPages({ agentId: id, limit });
        return {
          pages: pages.map((page) => ({ reference: page.reference, title: page.title, snippet: makeSnippet({ text: page.content, terms: [], maxChars: LISTING_SNIPPET_CHARS }), score: null, tags: [...page.tags], updatedAt: page.updatedAt })),
          matched: pages.length,
          budgetTokens: null,
        };
      }
      const budget = request.query.budget_tokens;
      const recall = await recallPages({ store: brain, agentId: id, query, limit, ...(budget === undefined ? {} : { budgetTokens: budget }) });
      return { pages: recall.pages.map((page) => ({ ...page, tags: [...page.tags] })), matched: recall.matched, budgetTokens: recall.budgetTokens };
    },
  );

  app.get(
    '/agents/:agentId/brain/pages/:reference',
    { schema: { summary: 'One page', tags: ['brain'], operationId: 'getBrainPage', params: pageParams, response: { 200: pageSchema, 404: errorEnvelopeSchema, ...commonErrorResponses } } },
    async (request) => {
      const ref = request.params.reference.normalize('NFC');
      const page = await brain.getPage({ agentId: request.params.agentId, reference: ref });
      if (page === undefined) throw pageNotFound(ref);
      return { ...page, tags: [...page.tags] };
    },
  );

  app.put(
    '/agents/:agentId/brain/pages/:reference',
    {
      schema: {
        summary: 'Write a page',
        description: '`201` with the page when the reference was free, `200` when it replaced a page. Tags are kept once each (compared without case). An agent keeps at most `BRAIN_PAGES_PER_AGENT` pages (10,000): one more is `409 brain_full`.',
        tags: ['brain'],
        operationId: 'putBrainPage',
        params: pageParams,
        body: pageBodySchema,
        response: {
          200: pageSchema,
          201: pageSchema,
          409: errorEnvelopeSchema.describe('`brain_full`: a new page past the agent\'s cap (`BRAIN_PAGES_PER_AGENT`); replacing a page still works.'),
          413: errorEnvelopeSchema,
          415: errorEnvelopeSchema,
          ...commonErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { title, content, tags } = request.body;
      const { page, created } = await brain.putPage({
        agentId: request.params.agentId,
        page: { reference: request.params.reference.normalize('NFC'), title: title.normalize('NFC'), content, tags: normalizeTags(tags) },
        now: clock.now().toISOString(),
      });
      return reply.code(created ? 201 : 200).send({ ...page, tags: [...page.tags] });
    },
  );

  app.delete(
    '/agents/:agentId/brain/pages/:reference',
    {
      schema: {
        summary: 'Delete a page',
        description: '`204` when the page was deleted; `404 page_not_found` when there was none.',
        tags: ['brain'],
        operationId: 'deleteBrainPage',
        params: pageParams,
        response: { 204: z.null().describe('Deleted'), 404: errorEnvelopeSchema, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const ref = request.params.reference.normalize('NFC');
      if (!(await brain.deletePage({ agentId: request.params.agentId, reference: ref }))) throw pageNotFound(ref);
      return reply.code(204).send(null);
    },
  );
};
