import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { describeFileError } from '../../../src/tools/computer/describe-file-error.js';
import { HomePathError } from '../../../src/tools/computer/home-path-error.js';

describe('describeFileError', () => {
  it('rewrites a system error around the path the model gave, without the host path', async () => {
    const error = await readFile('/nonexistent-turn-runtime/secret/notes.md').catch((failure: unknown) => failure);
    const described = describeFileError(error, 'notes.md');
    expect(described.message).toBe('notes.md does not exist; use list_files to see what is there');
    expect(described.message).not.toContain('/nonexistent-turn-runtime');
  });

  it('passes errors meant for the model through unchanged', () => {
    const guard = new HomePathError('"../x" leads outside the agent home');
    const written = new Error('old_string was not found in notes.md');
    const abortReason = new DOMException('This operation was aborted', 'AbortError');
    expect(describeFileError(guard, 'x')).toBe(guard);
    expect(describeFileError(written, 'x')).toBe(written);
    expect(describeFileError(abortReason, 'x')).toBe(abortReason);
  });
});
