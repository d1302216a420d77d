import { describe, expect, it } from 'vitest';
import { createFileTools } from '../../../src/tools/computer/create-file-tools.js';
import { isJsonObject } from '../../../src/json.js';

describe('createFileTools', () => {
  const tools = createFileTools({ home: '/nonexistent-home' });

  it('returns read_file, write_file, edit_file and list_files in that order', () => {
    expect(tools.map((tool) => tool.name)).toEqual(['read_file', 'write_file', 'edit_file', 'list_files']);
  });

  it('runs only the read-only tools in parallel and marks the writers destructive', () => {
    expect(tools.map((tool) => [tool.name, tool.executionMode, tool.isReadOnly, tool.isDestructive])).toEqual([
      ['read_file', 'parallel', true, false],
      ['write_file', 'sequential', false, true],
      ['edit_file', 'sequential', false, true],
      ['list_files', 'parallel', true, false],
    ]);
  });

  it('describes every parameter to the model', () => {
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(100);
      const properties = tool.parameters['properties'];
      if (!isJsonObject(properties)) throw new Error(`${tool.name} has no properties`);
      for (const [name, schema] of Object.entries(properties)) {
        expect(isJsonObject(schema) && typeof schema['description'] === 'string', `${tool.name}.${name}`).toBe(true);
      }
    }
  });
});
