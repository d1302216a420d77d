import { invalidRequest } from '../../service-error.js';
import type { Skill, SkillCatalog } from './skill-catalog.js';

/**
 * The skills an agent enabled (`agent.tools.skills`), in the order it named them, each once. A
 * name the catalog does not have is the caller's fault: an `invalid_request` (400, no turn)
 * naming each unknown entry. With no SKILLS_DIR the catalog is empty, so every name is unknown:
 * a turn must not quietly run without instructions its caller asked for.
 */
export function resolveRequestedSkills(options: { readonly names: readonly string[]; readonly catalog: SkillCatalog }): Skill[] {
  const { names, catalog } = options;
  const skills: Skill[] = [];
  const issues: { path: (string | number)[]; message: string }[] = [];
  names.forEach((name, index) => {
    const skill = catalog.find(name);
    if (skill === undefined) {
      const message = catalog.size === 0 ? `no skill named "${name}": this server has no skills (SKILLS_DIR is not set or holds none)` : `no skill named "${name}" is available on this server`;
      issues.push({ path: ['agent', 'tools', 'skills', index], message });
    } else if (!skills.includes(skill)) {
      skills.push(skill);
    }
  });
  if (issues.length > 0) throw invalidRequest(issues);
  return skills;
}
