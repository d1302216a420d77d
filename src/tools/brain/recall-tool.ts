import { z } from 'zod';
import { BRAIN_LIMITS } from '../../brain/brain-page.js';
import type { BrainStore } from '../../brain/brain-store.js';
import { recallPages } from '../../brain/recall-pages.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import { countPages, quoteForLabel } from './brain-labels.js';

const recallSchema = z.object({
  query: z
    .string()
    .trim()
    .min(1)
    .max(BRAIN_LIMITS.queryChars)
    .describe('What to look for, in words the page would use, in any language: "vendor pricing", "供应商 价格", "東京 オフィス".'),
  budget_tokens: z
    .number()
    .int()
    .min(BRAIN_LIMITS.minBudgetTokens)
    .optional()
    .describe(`How many tokens the answer may take (default ${BRAIN_LIMITS.defaultBudgetTokens}, at most ${BRAIN_LIMITS.maxBudgetTokens}; larger values are clamped).`),
});

export type RecallParams = z.output<typeof recallSchema>;

/** `recall`: ranked full-text search over the agent's pages, snippets within a token budget. */
export function createRecallTool(options: { readonly agentId: string; readonly store: BrainStore }): WorkerAgentTool<RecallParams> {
  const { agentId, store } = options;
  return defineWorkerTool<RecallParams>({
    name: 'recall',
    description: [
      'Search your Brain (the pages saved with remember) by full text, best matches first, in English, Chinese, Japanese and other languages.',
      'Answers each page\'s reference, title, tags and the passage that matched, within budget_tokens. Use get_page with a reference to read a whole page.',
      'Check it before asking the person something you may already know.',
    ].join(' '),
    schema: recallSchema,
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: (params) => `Recalling ${quoteForLabel(params.query)}`,
    describeCompletedActivity: (params, result) => {
      const found = result.details?.['pages'];
      const count = Array.isArray(found) ? found.length : 0;
      return count === 0 ? `Recalled nothing for ${quoteForLabel(params.query)}` : `Recalled ${countPages(count)} for ${quoteForLabel(params.query)}`;
    },
    async execute(params, context) {
      context.signal.throwIfAborted();
      const recall = await recallPages({ store, agentId, query: params.query, ...(params.budget_tokens === undefined ? {} : { budgetTokens: params.budget_tokens }) });
      return {
        content: recall.text,
        details: {
          pages: recall.pages.map((page) => ({ reference: page.reference, title: page.title, score: page.score })),
          matched: recall.matched,
          budgetTokens: recall.budgetTokens,
          estimatedTokens: recall.estimatedTokens,
        },
      };
    },
  });
}
