import { z } from 'zod';
import { BRAIN_LIMITS } from '../../brain/brain-page.js';
import type { BrainStore } from '../../brain/brain-store.js';
import { checkPageReference } from '../../brain/page-reference.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import { quoteForLabel } from './brain-labels.js';

const forgetSchema = z.object({
  reference: z.string().min(1).max(BRAIN_LIMITS.referenceChars * 4).describe('The reference of the page to delete, as recall or remember gave it.'),
});

export type ForgetParams = z.output<typeof forgetSchema>;

/** `forget`: deletes one page of the agent's Brain for good. */
export function createForgetTool(options: { readonly agentId: string; readonly store: BrainStore }): WorkerAgentTool<ForgetParams> {
  const { agentId, store } = options;
  return defineWorkerTool<ForgetParams>({
    name: 'forget',
    description: 'Delete one page of your Brain for good, by its reference: for knowledge that is wrong or no longer wanted. To correct a page, use remember with its reference instead.',
    schema: forgetSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: true,
    describeActivity: (params) => `Forgetting ${quoteForLabel(params.reference)}`,
    describeCompletedActivity: (params, result) => {
      const title = result.details?.['title'];
      return `Forgot ${quoteForLabel(typeof title === 'string' ? title : params.reference)}`;
    },
    async execute(params, context) {
      context.signal.throwIfAborted();
      const checked = checkPageReference(params.reference);
      if (!checked.ok) throw new Error(`${checked.problem}. Use recall to find pages and their references.`);
      const page = await store.getPage({ agentId, reference: checked.reference });
      if (page === undefined || !(await store.deletePage({ agentId, reference: checked.reference }))) {
        throw new Error(`there is no page "${checked.reference}" (nothing was deleted). Use recall to find pages and their references.`);
      }
      return { content: `Deleted the page “${page.title}” ("${page.reference}").`, details: { reference: page.reference, title: page.title } };
    },
  });
}
