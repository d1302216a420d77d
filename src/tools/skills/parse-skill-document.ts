import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { hasOwn, isJsonObject } from '../../json.js';
import { MCP_SERVER_NAME_PATTERN } from '../mcp/mcp-config.js';
import { formatIssuePath } from '../schema/format-issue-path.js';

/**
 * A skill name as the Agent Skills specification writes it (agentskills.io/specification):
 * 1–64 lowercase letters, digits and hyphens, no hyphen at either end, no `--`. It is also the
 * folder name, a `use_skill` enum value and a file name in the agent home.
 */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_MCP_SERVERS = 16;

/** The `metadata` key that names the MCP servers a skill uses, space-delimited like `allowed-tools`. */
export const MCP_SERVERS_METADATA_KEY = 'mcp-servers';

/**
 * The front matter this service reads. `license`, `compatibility`, `allowed-tools` and fields
 * other agents define (Claude Code's `model` …) are accepted and ignored. MCP servers go in
 * `metadata` (a string→string map in the spec): the spec's reference validator (skills-ref)
 * refuses unknown top-level fields, so a top-level `mcp` would make the skill invalid elsewhere.
 */
const frontMatterSchema = z
  .looseObject({
    name: z
      .string()
      .max(64, 'must be at most 64 characters')
      .regex(SKILL_NAME_PATTERN, 'must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen'),
    description: z
      .string()
      .max(1024, 'must be at most 1024 characters')
      .refine((value) => value.trim() !== '', 'must not be empty'),
    metadata: z
      .looseObject({
        [MCP_SERVERS_METADATA_KEY]: z
          .string()
          .transform((value) => [...new Set(value.split(/[\s,]+/).filter((name) => name !== ''))])
          .pipe(
            z
              .array(z.string().regex(MCP_SERVER_NAME_PATTERN, 'each MCP server name must match ^[A-Za-z0-9_-]{1,64}$'))
              .min(1, 'names no server')
              .max(MAX_MCP_SERVERS, `names more than ${MAX_MCP_SERVERS} servers`),
          )
          .optional(),
      })
      .optional(),
  })
  .superRefine((value, context) => {
    if (hasOwn(value, 'mcp')) {
      context.addIssue({ code: 'custom', path: ['mcp'], message: `not an Agent Skills field; name MCP servers in metadata.${MCP_SERVERS_METADATA_KEY} ("server another-server")` });
    }
  });

export interface SkillDocument {
  readonly name: string;
  readonly description: string;
  readonly body: string;
  readonly mcpServerNames: readonly string[];
}

export type SkillDocumentOutcome = { readonly ok: true; readonly document: SkillDocument } | { readonly ok: false; readonly problem: string };

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*$/m;

/**
 * Splits a SKILL.md into its YAML front matter and Markdown body and validates the front
 * matter. Every problem is a value (`{ ok: false, problem }`) for the loader to warn about.
 */
export function parseSkillDocument(text: string): SkillDocumentOutcome {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const opening = OPENING.exec(source);
  if (opening === null) return { ok: false, problem: 'it does not start with YAML front matter (a line "---")' };
  const rest = source.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (closing === null) return { ok: false, problem: 'its front matter has no closing "---" line' };
  const yamlText = rest.slice(0, closing.index);
  const body = rest.slice(closing.index + closing[0].length).replace(/^\r?\n/, '');

  let raw: unknown;
  try {
    // `yaml` refuses duplicate keys and caps alias expansion (no billion laughs).
    raw = parseYaml(yamlText);
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] ?? '' : String(error);
    return { ok: false, problem: `its front matter is not valid YAML: ${message}` };
  }
  if (!isJsonObject(raw)) return { ok: false, problem: 'its front matter is not a mapping of fields' };
  const parsed = frontMatterSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message.replace(/^Invalid input: /, '')}`);
    return { ok: false, problem: problems.join('; ') };
  }
  const { name, description, metadata } = parsed.data;
  return { ok: true, document: { name, description: description.trim(), body, mcpServerNames: metadata?.[MCP_SERVERS_METADATA_KEY] ?? [] } };
}
