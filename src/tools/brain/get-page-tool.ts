import { z } from 'zod';
import { BRAIN_LIMITS } from '../../brain/brain-page.js';
import type { BrainStore } from '../../brain/brain-store.js';
import { checkPageReference } from '../../brain/page-reference.js';
import { formatBytes } from '../../format/format-bytes.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import { quoteForLabel } from './brain-labels.js';

const getPageSchema = z.object({
  reference: z.string().min(1).max(BRAIN_LIMITS.referenceChars * 4).describe('The page\'s reference, as recall or remember gave it: "vendor-pricing".'),
});

export type GetPageParams = z.output<typeof getPageSchema>;

/** `get_page`: one whole page of the agent's Brain, by reference. */
export function createGetPageTool(options: { readonly agentId: string; readonly store: BrainStore }): WorkerAgentTool<GetPageParams> {
  const { agentId, store } = options;
  return defineWorkerTool<GetPageParams>({
    name: 'get_page',
    description: 'Read one whole page of your Brain by its reference (from recall or remember): its title, tags, when it was updated, and all its content.',
    schema: getPageSchema,
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: (params) => `Opening page ${quoteForLabel(params.reference)}`,
    describeCompletedActivity: (_params, result) => {
      const title = result.details?.['title'];
      const bytes = result.details?.['bytes'];
      return typeof title === 'string' && typeof bytes === 'number' ? `Read ${quoteForLabel(title)} (${formatBytes(bytes)})` : 'Read a page';
    },
    async execute(params, context) {
      context.signal.throwIfAborted();
      const checked = checkPageReference(params.reference);
      if (!checked.ok) throw new Error(`${checked.problem}. Use recall to find pages and their references.`);
      const page = await store.getPage({ agentId, reference: checked.reference });
      if (page === undefined) throw new Error(`there is no page "${checked.reference}". Use recall to find pages and their references.`);
      const tags = page.tags.length === 0 ? '' : ` · tags: ${page.tags.join(', ')}`;
      return {
        content: `# ${page.title}\nreference: ${page.reference}${tags} · updated ${page.updatedAt}\n\n${page.content}`,
        details: { reference: page.reference, title: page.title, bytes: Buffer.byteLength(page.content), updatedAt: page.updatedAt },
      };
    },
  });
}
