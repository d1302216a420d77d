import type { McpServerConfig } from '../mcp/mcp-config.js';

/** A file that comes with a skill (a script, a reference, an asset), relative to its folder. */
export interface SkillFile {
  /** POSIX path relative to the skill folder, e.g. `scripts/extract.py`. */
  readonly path: string;
  readonly bytes: number;
  /** True when the file is executable on the host; the installed copy keeps that. */
  readonly executable: boolean;
}

/** One skill of the catalog, as read from `<SKILLS_DIR>/<name>/SKILL.md` at start-up. */
export interface Skill {
  readonly name: string;
  readonly description: string;
  /** The Markdown after the front matter: what `use_skill` returns. */
  readonly body: string;
  /** The skill folder on the host. */
  readonly folder: string;
  /** Every regular file of the folder except SKILL.md, sorted by path. */
  readonly files: readonly SkillFile[];
  /** The MCP servers it uses (`metadata.mcp-servers`), in the order it names them, as configured. */
  readonly mcpServers: readonly { readonly name: string; readonly config: McpServerConfig }[];
}

/**
 * The skills this server offers, loaded once at start-up (there is no reload: a changed
 * SKILLS_DIR takes effect on restart). Agents enable skills by name per request.
 */
export class SkillCatalog {
  readonly #skills: ReadonlyMap<string, Skill>;

  constructor(skills: readonly Skill[]) {
    this.#skills = new Map(skills.map((skill) => [skill.name, skill]));
  }

  /** The skill of that name; a Map lookup, so a name like `__proto__` finds nothing. */
  find(name: string): Skill | undefined {
    return this.#skills.get(name);
  }

  get names(): readonly string[] {
    return [...this.#skills.keys()];
  }

  get size(): number {
    return this.#skills.size;
  }
}

export const EMPTY_SKILL_CATALOG = new SkillCatalog([]);
