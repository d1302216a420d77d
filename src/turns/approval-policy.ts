import { z } from 'zod';
import { hasOwn } from '../json.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { toolIdentity } from '../tools/tool-map.js';

/** What a turn does with a call to a tool: run it, ask a person first, or refuse it. */
export type ApprovalMode = 'ask' | 'allow' | 'deny';

const MAX_POLICY_TOOLS = 500;

export const approvalPolicySchema = z
  .strictObject({
    destructive: z.enum(['ask', 'allow']).optional().describe('For tools marked `isDestructive` (default `allow`).'),
    tools: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]{1,200}$/, 'must be a tool name (or namespace.name)'), z.enum(['ask', 'allow', 'deny']))
      .refine((tools) => Object.keys(tools).length <= MAX_POLICY_TOOLS, `at most ${MAX_POLICY_TOOLS} tools`)
      .optional()
      .describe('Per tool name (or `namespace.name`); wins over `destructive`.'),
  })
  .describe('Which tool calls wait for a person (`ask`), run (`allow`, the default) or never run (`deny`).');

export type ApprovalPolicy = z.infer<typeof approvalPolicySchema>;

/**
 * The mode for one tool under a policy: a per-tool entry (by `namespace.name`, then by bare
 * name) wins over `destructive`; everything else is allowed. Own keys only: a tool named
 * `__proto__` or `constructor` finds nothing it was not given.
 */
export function resolveApprovalMode(options: { readonly policy: ApprovalPolicy | undefined; readonly tool: WorkerAgentTool }): ApprovalMode {
  const { policy, tool } = options;
  if (policy === undefined) return 'allow';
  const tools = policy.tools ?? {};
  const identity = toolIdentity(tool.name, tool.namespace);
  if (hasOwn(tools, identity)) return tools[identity] ?? 'allow';
  if (hasOwn(tools, tool.name)) return tools[tool.name] ?? 'allow';
  if (tool.isDestructive && policy.destructive === 'ask') return 'ask';
  return 'allow';
}
