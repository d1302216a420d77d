import { describe, expect, it } from 'vitest';
import { parseSkillDocument } from '../../../src/tools/skills/parse-skill-document.js';
import { skillMarkdown } from './skill-test-kit.js';

function problemOf(text: string): string {
  const outcome = parseSkillDocument(text);
  if (outcome.ok) throw new Error('expected a problem');
  return outcome.problem;
}

describe('parseSkillDocument', () => {
  it('splits the front matter from the Markdown body and keeps the body as written', () => {
    const outcome = parseSkillDocument(skillMarkdown('name: release-notes\ndescription: >\n  Writes release notes\n  from merged PRs.', '# Release notes\n\n---\n\nA rule above.\n'));
    expect(outcome).toEqual({
      ok: true,
      document: { name: 'release-notes', description: 'Writes release notes from merged PRs.', body: '# Release notes\n\n---\n\nA rule above.\n', mcpServerNames: [] },
    });
  });

  it('reads a byte order mark and CRLF line ends', () => {
    const outcome = parseSkillDocument('\uFEFF---\r\nname: crlf\r\ndescription: Windows file.\r\n---\r\nBody\r\n');
    expect(outcome).toMatchObject({ ok: true, document: { name: 'crlf', description: 'Windows file.', body: 'Body\r\n' } });
  });

  it('accepts the optional Agent Skills fields and fields other agents add, and ignores them', () => {
    const outcome = parseSkillDocument(
      skillMarkdown('name: pdf\ndescription: PDFs.\nlicense: MIT\ncompatibility: Requires poppler\nallowed-tools: Bash(pdftotext:*) Read\nmetadata:\n  version: 1.0\nmodel: fast'),
    );
    expect(outcome.ok).toBe(true);
  });

  it('reads MCP servers from metadata.mcp-servers, space or comma separated, each once', () => {
    const outcome = parseSkillDocument(skillMarkdown('name: inventory\ndescription: Stock.\nmetadata:\n  mcp-servers: "acme  github,acme"'));
    expect(outcome).toMatchObject({ ok: true, document: { mcpServerNames: ['acme', 'github'] } });
  });

  it('refuses a top-level mcp field, pointing at metadata.mcp-servers', () => {
    expect(problemOf(skillMarkdown('name: inventory\ndescription: Stock.\nmcp: [acme]'))).toBe(
      'mcp: not an Agent Skills field; name MCP servers in metadata.mcp-servers ("server another-server")',
    );
  });

  it('refuses MCP server names no configuration could hold', () => {
    expect(problemOf(skillMarkdown('name: a\ndescription: A.\nmetadata:\n  mcp-servers: "ok bad/name"'))).toContain('metadata["mcp-servers"][1]: each MCP server name must match');
    expect(problemOf(skillMarkdown('name: a\ndescription: A.\nmetadata:\n  mcp-servers: " "'))).toContain('names no server');
    expect(problemOf(skillMarkdown('name: a\ndescription: A.\nmetadata:\n  mcp-servers: [acme]'))).toContain('metadata["mcp-servers"]: expected string');
  });

  it('refuses names the specification does not allow', () => {
    for (const name of ['Release-Notes', '-pdf', 'pdf-', 'pdf--tools', 'pdf_tools', 'a'.repeat(65), '"café"', '""']) {
      expect(problemOf(skillMarkdown(`name: ${name}\ndescription: D.`))).toMatch(/^name: must be/);
    }
    expect(parseSkillDocument(skillMarkdown(`name: ${'a'.repeat(64)}\ndescription: D.`)).ok).toBe(true);
  });

  it('refuses a missing, empty or oversized description, naming every problem at once', () => {
    expect(problemOf(skillMarkdown('name: a'))).toBe('description: expected string, received undefined');
    expect(problemOf(skillMarkdown('name: a\ndescription: "   "'))).toBe('description: must not be empty');
    expect(problemOf(skillMarkdown(`name: a\ndescription: ${'x'.repeat(1025)}`))).toBe('description: must be at most 1024 characters');
    expect(problemOf(skillMarkdown('name: A\ndescription: 42'))).toBe('name: must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen; description: expected string, received number');
  });

  it('refuses a file without front matter, with unclosed front matter, or with front matter that is not a mapping', () => {
    expect(problemOf('# Just Markdown\n')).toBe('it does not start with YAML front matter (a line "---")');
    expect(problemOf('---\nname: a\ndescription: b\n')).toBe('its front matter has no closing "---" line');
    expect(problemOf('---\n- a\n- b\n---\nbody')).toBe('its front matter is not a mapping of fields');
    expect(problemOf('---\n---\nbody')).toBe('its front matter is not a mapping of fields');
  });

  it('refuses YAML that does not parse, duplicate keys and alias bombs', () => {
    expect(problemOf(skillMarkdown('name: [unclosed\ndescription: d'))).toMatch(/^its front matter is not valid YAML: /);
    expect(problemOf(skillMarkdown('name: a\nname: b\ndescription: d'))).toMatch(/^its front matter is not valid YAML: .*unique/i);
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, index) => `${'bcdefghi'[index] ?? 'z'}: &${'bcdefghi'[index] ?? 'z'} [${Array(9).fill(`*${index === 0 ? 'a' : ('bcdefghi'[index - 1] ?? 'z')}`).join(',')}]`)];
    expect(problemOf(skillMarkdown(`${bomb.join('\n')}\nname: a\ndescription: d`))).toMatch(/^its front matter is not valid YAML: .*alias/i);
  });
});
