import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeptItemText } from '../../src/models/kept-item-text.js';

const realText = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8').slice(0, 20_000);
const texts = {
  'prose and code': JSON.stringify({ type: 'function_call_output', call_id: 'c', output: realText }),
  'two-byte text': JSON.stringify({ output: `${'ünïcødé → 👀 '.repeat(300)}${realText.slice(0, 3000)}` }),
  'one kilobyte': 'x'.repeat(1024),
};

describe('an item text kept deflated', () => {
  for (const [name, text] of Object.entries(texts)) {
    it(`gives back exactly its text once deflated (${name})`, () => {
      const kept = new KeptItemText(text);
      expect(kept.text()).toBe(text);
      kept.deflate();
      expect(kept.isDeflated).toBe(true);
      expect(kept.text()).toBe(text);
      // Asked again, it inflates again: the item stays deflated.
      expect(kept.isDeflated).toBe(true);
      expect(kept.text()).toBe(text);
    });
  }

  it('keeps text that does not compress as it is, and does not try again', () => {
    // Random CJK characters: three UTF-8 bytes each, which deflate cannot bring near one per character.
    const text = JSON.stringify({ output: String.fromCharCode(...Array.from(randomBytes(4000), (byte, at) => 0x4e00 + byte * 64 + (at % 64))) });
    const kept = new KeptItemText(text);
    kept.deflate();
    expect(kept.isDeflated).toBe(false);
    expect(kept.text()).toBe(text);
    kept.deflate();
    expect(kept.isDeflated).toBe(false);
  });

  it('holds far less than the text once deflated', () => {
    const text = texts['prose and code'];
    const kept = new KeptItemText(text);
    expect(kept.heldLength).toBe(text.length);
    kept.deflate();
    expect(kept.heldLength).toBeLessThan(text.length / 2);
  });
});
