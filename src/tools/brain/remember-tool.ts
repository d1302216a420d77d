import { z } from 'zod';
import type { Clock } from '../../clock.js';
import { BRAIN_LIMITS } from '../../brain/brain-page.js';
import type { BrainStore } from '../../brain/brain-store.js';
import { pageContentSchema, pageTagsSchema, pageTitleSchema } from '../../brain/page-input-schemas.js';
import { rememberPage } from '../../brain/remember-page.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import { quoteForLabel } from './brain-labels.js';

const rememberSchema = z.object({
  title: pageTitleSchema.optional().describe('A short title that says what the page is about: "Vendor pricing". Without one, the first line of content is used.'),
  content: pageContentSchema.describe(`What to remember, as Markdown, at most ${BRAIN_LIMITS.contentChars} characters. Write it so it makes sense on its own later.`),
  tags: pageTagsSchema.optional().describe(`Up to ${BRAIN_LIMITS.tags} short tags that help find the page: ["vendors", "pricing"].`),
  reference: z
    .string()
    .max(BRAIN_LIMITS.referenceChars * 4)
    .optional()
    .describe('The reference of an existing page to replace it with this one (from recall or an earlier remember). Leave it out to create a new page.'),
});

export type RememberParams = z.output<typeof rememberSchema>;

/** `remember`: writes a knowledge page the agent will find again with `recall` in later turns. */
export function createRememberTool(options: { readonly agentId: string; readonly store: BrainStore; readonly clock: Clock }): WorkerAgentTool<RememberParams> {
  const { agentId, store, clock } = options;
  return defineWorkerTool<RememberParams>({
    name: 'remember',
    description: [
      'Save knowledge worth keeping across conversations as a page in your Brain: facts, decisions, preferences, how-tos.',
      'One topic per page, with a clear title and a few tags. To update a page, pass its reference: the new content replaces it whole.',
      'Pages are private to you and found later with recall.',
    ].join(' '),
    schema: rememberSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: (params) => `Remembering ${quoteForLabel(params.title ?? (params.content.split('\n').find((line) => line.trim() !== '') ?? '').replace(/^\s*#+\s*/, ''))}`,
    describeCompletedActivity: (params, result) => {
      const title = typeof result.details?.['title'] === 'string' ? result.details['title'] : (params.title ?? '');
      return `${result.details?.['created'] === false ? 'Updated' : 'Remembered'} ${quoteForLabel(title)}`;
    },
    async execute(params, context) {
      context.signal.throwIfAborted();
      const { page, created } = await rememberPage({ store, agentId, content: params.content, title: params.title, tags: params.tags, reference: params.reference, now: clock.now().toISOString() });
      const tags = page.tags.length === 0 ? '' : ` Tags: ${page.tags.join(', ')}.`;
      return {
        content: `${created ? 'Saved a new page' : 'Replaced the page'} “${page.title}” with reference "${page.reference}".${tags} Read it with get_page or find it with recall.`,
        details: { reference: page.reference, title: page.title, created, tags: [...page.tags], characters: page.content.length },
      };
    },
  });
}
