import { describe, expect, it } from 'vitest';
import { MAX_ARGUMENT_BYTES, MAX_REPAIR_BYTES, parseArgumentsJson, type ParsedArguments } from '../../src/arguments/parse-arguments-json.js';

const parse = (raw: string, acceptsEmpty = true): ParsedArguments => parseArgumentsJson(raw, { acceptsEmpty: () => acceptsEmpty });

function expectRepaired(raw: string, value: unknown, repair: string): void {
  expect(parse(raw)).toEqual({ ok: true, value, repair });
}

function expectRefused(raw: string, problem: RegExp): void {
  const parsed = parse(raw);
  expect(parsed.ok, `expected ${JSON.stringify(raw)} to be refused, got ${JSON.stringify(parsed)}`).toBe(false);
  if (!parsed.ok) expect(parsed.problem).toMatch(problem);
}

/** A valid JSON object of at least `bytes` UTF-8 bytes. */
function objectOfSize(bytes: number): string {
  return JSON.stringify({ text: 'x'.repeat(bytes) });
}

/** `{"text":"xx…x",}` (a trailing comma to repair) of exactly `bytes` bytes. */
function trailingCommaObjectOfBytes(bytes: number): string {
  const prefix = '{"text":"';
  const suffix = '",}';
  return prefix + 'x'.repeat(bytes - prefix.length - suffix.length) + suffix;
}

describe('parseArgumentsJson: each rung of the ladder', () => {
  it('takes valid JSON as sent and records the rung "none"', () => {
    expectRepaired('{"path":"notes.md","limit":20}', { path: 'notes.md', limit: 20 }, 'none');
  });

  it('takes valid JSON surrounded by whitespace as sent', () => {
    expectRepaired('  \n{"a":1}\n  ', { a: 1 }, 'none');
  });

  it('strips a code fence with a language tag that wraps the whole string', () => {
    expectRepaired('```json\n{"path":"notes.md"}\n```', { path: 'notes.md' }, 'code_fence');
  });

  it('strips a bare fence, an upper-case tag and CRLF line ends', () => {
    expectRepaired('```\n{"a":1}\n```', { a: 1 }, 'code_fence');
    expectRepaired('```JSON\r\n{"a":1}\r\n```', { a: 1 }, 'code_fence');
    expectRepaired('  ```json\n{"a": 1}\n```  \n', { a: 1 }, 'code_fence');
  });

  it('keeps a fence inside a fenced JSON string intact (the outer fence is the one stripped)', () => {
    const raw = '```json\n{"code":"```js\\nlet x = 1;\\n```"}\n```';
    expectRepaired(raw, { code: '```js\nlet x = 1;\n```' }, 'code_fence');
  });

  it('finds the object inside a fence nested in another fence', () => {
    expectRepaired('```json\n```json\n{"a":1}\n```\n```', { a: 1 }, 'balanced_object');
  });

  it('takes the first balanced object out of prose around it', () => {
    expectRepaired('Sure! Here are the arguments: {"path":"notes.md"} Let me know if you need more.', { path: 'notes.md' }, 'balanced_object');
  });

  it('is string-aware: a "}" and an escaped quote inside a string do not end the object', () => {
    expectRepaired('Calling with {"pattern":"a}b\\"c{","n":1} now', { pattern: 'a}b"c{', n: 1 }, 'balanced_object');
  });

  it('ignores a brace inside a string in the prose before the object', () => {
    expectRepaired('I will pass "{" as text: {"a":1}', { a: 1 }, 'balanced_object');
  });

  it('refuses two concatenated objects rather than silently dropping the second', () => {
    expectRefused('{"a":1}\n{"b":2}', /more than one JSON object/);
  });

  it('gives up when the text was cut after a comma: more members were coming', () => {
    expectRefused('{"path":"notes.md",', /cut off after a comma/);
    expectRefused('{"list":[1,2,', /cut off after a comma/);
  });

  it('closes nested containers cut after a complete value', () => {
    expectRepaired('{"a":{"b":"c"},"list":[{"x":1}]', { a: { b: 'c' }, list: [{ x: 1 }] }, 'closed_containers');
    expectRepaired('{"a":{"b":"c"}', { a: { b: 'c' } }, 'closed_containers');
    expectRepaired('{"list": [', { list: [] }, 'closed_containers');
  });

  it('drops trailing commas in a complete object', () => {
    expectRepaired('{"a":[1,2,],"b":3,}', { a: [1, 2], b: 3 }, 'closed_containers');
  });

  it('accepts a final number once whitespace shows it was complete', () => {
    expectRepaired('{"a":[1,2 ', { a: [1, 2] }, 'closed_containers');
  });

  it('records the higher rung when a fenced body needed closing too', () => {
    expectRepaired('```json\n{"a":"x",\n```', { a: 'x' }, 'closed_containers');
  });

  it('accepts a final number inside a closed fence: the fence proves the model finished', () => {
    expectRepaired('```json\n{"a":12\n```', { a: 12 }, 'closed_containers');
  });

  it('repairs an object that ends in prose after a cut', () => {
    expectRepaired('Here: {"a":{"b":"}"},"c":[1]', { a: { b: '}' }, c: [1] }, 'closed_containers');
  });

  it('closes an object cut right after a complete string', () => {
    expectRepaired('{"a":"b"', { a: 'b' }, 'closed_containers');
  });

  it('escapes raw line breaks and tabs inside a string, recording the rung "escaped_control_characters"', () => {
    expectRepaired('{"path":"a.py","content":"def f():\n\treturn 1\r\n"}', { path: 'a.py', content: 'def f():\n\treturn 1\r\n' }, 'escaped_control_characters');
  });

  it('leaves line breaks between tokens alone and keeps escaped ones as they were', () => {
    expectRepaired('{\n\t"a": "x\ny",\n\t"b": "already \\n escaped"\n}', { a: 'x\ny', b: 'already \n escaped' }, 'escaped_control_characters');
    expectRepaired('{\n\t"a": 1\n}', { a: 1 }, 'none');
  });

  it('does not end a string at an escaped quote when escaping', () => {
    expectRepaired('{"a":"say \\"hi\\"\nthen go"}', { a: 'say "hi"\nthen go' }, 'escaped_control_characters');
  });

  it('records the higher rung when escaping combines with a fence, prose or a cut', () => {
    expectRepaired('```json\n{"a":"x\ny"}\n```', { a: 'x\ny' }, 'escaped_control_characters');
    expectRepaired('Here you go: {"a":"x\ny"} done', { a: 'x\ny' }, 'escaped_control_characters');
    expectRepaired('{"a":"x\ny"', { a: 'x\ny' }, 'closed_containers');
  });

  it('repairs at exactly 64 KiB and not one byte more', () => {
    const atLimit = trailingCommaObjectOfBytes(MAX_REPAIR_BYTES);
    expect(parse(atLimit)).toEqual({ ok: true, value: { text: expect.any(String) as unknown }, repair: 'closed_containers' });
    expectRefused(trailingCommaObjectOfBytes(MAX_REPAIR_BYTES + 1), /too large to repair/);
  });
});

describe('parseArgumentsJson: giving up rather than guessing', () => {
  it('gives up when the text was cut inside a string', () => {
    expectRefused('{"path":"notes', /cut off inside a string/);
    expectRefused('{"command":"rm -rf /tmp/build', /cut off inside a string/);
  });

  it('gives up when the cut falls right after an escape inside a string', () => {
    expectRefused('{"a":"quote \\"', /cut off inside a string/);
    expectRefused('{"a":"\\u00', /cut off inside a string/);
    expectRefused('{"a":"trailing backslash \\', /cut off inside a string/);
  });

  it('gives up when a "}" inside a cut string would otherwise look like the end', () => {
    expectRefused('{"a":"}', /cut off inside a string/);
  });

  it('gives up when the text ends inside a number', () => {
    expectRefused('{"count":12', /cut off inside the value "12"/);
    expectRefused('{"a":[1,2', /cut off inside the value "2"/);
    expectRefused('{"a":1.', /cut off inside the value "1\."/);
    expectRefused('{"a":-', /cut off inside the value "-"/);
    expectRefused('{"a":1e', /cut off inside the value "1e"/);
  });

  it('gives up when the text ends inside or right after a literal', () => {
    expectRefused('{"force":tru', /cut off inside the value "tru"/);
    expectRefused('{"a":[true, fals', /cut off inside the value "fals"/);
    expectRefused('{"a":null', /cut off inside the value "null"/);
  });

  it('gives up on an unfinished literal inside a fence instead of guessing it', () => {
    expectRefused('```json\n{"a":tru\n```', /would change more than closing brackets and commas/);
  });

  it('gives up when the text ends after a colon', () => {
    expectRefused('{"path":', /cut off before a value/);
    expectRefused('{"a":{"b": ', /cut off before a value/);
  });

  it('gives up when the text ends after a dangling key', () => {
    expectRefused('{"path"', /cut off after the key "path"/);
    expectRefused('{"a":1,"recursive"', /cut off after the key "recursive"/);
    expectRefused('{"a":1,"recursive",', /cut off after/);
  });

  it('refuses arguments over 256 KiB even when they are valid JSON', () => {
    const raw = objectOfSize(MAX_ARGUMENT_BYTES);
    expectRefused(raw, /over the 256 KiB limit/);
  });

  it('counts the limit in UTF-8 bytes, not characters', () => {
    const raw = JSON.stringify({ text: 'é'.repeat(MAX_ARGUMENT_BYTES / 2) });
    expect(raw.length).toBeLessThan(MAX_ARGUMENT_BYTES);
    expectRefused(raw, /over the 256 KiB limit/);
  });

  it('parses valid JSON between 64 and 256 KiB without repair', () => {
    const raw = objectOfSize(100 * 1024);
    const parsed = parse(raw);
    expect(parsed.ok && parsed.repair).toBe('none');
  });

  it('does not repair malformed JSON between 64 and 256 KiB', () => {
    const raw = objectOfSize(100 * 1024).slice(0, -1) + ',}';
    expectRefused(raw, /too large to repair/);
    const fenced = '```json\n' + objectOfSize(MAX_REPAIR_BYTES) + '\n```';
    expectRefused(fenced, /too large to repair/);
  });

  it('gives up on prose with no object in it', () => {
    expectRefused('I could not decide which file to read.', /not a JSON object/);
    expectRefused('```\nnothing here\n```', /not a JSON object/);
  });

  it('does not let jsonrepair change quotes', () => {
    expectRefused("{'path':'notes.md'}", /would change more than closing brackets and commas/);
    expectRefused('{"path":\u201cnotes.md\u201d}', /would change more than closing brackets and commas/);
    expectRefused('{path:"notes.md"}', /would change more than closing brackets and commas/);
  });

  it('does not let jsonrepair drop an ellipsis, a comment or fix a literal', () => {
    expectRefused('{"items":[1,2,...]}', /would change more than closing brackets and commas/);
    expectRefused('{"a":1 // the count\n}', /would change more than closing brackets and commas/);
    expectRefused('{"a":True}', /would change more than closing brackets and commas/);
    expectRefused('{"a":None}', /would change more than closing brackets and commas/);
    expectRefused('{"a":NaN}', /would change more than closing brackets and commas/);
  });

  it('does not let jsonrepair concatenate strings', () => {
    expectRefused('{"a":"x"+"y"}', /would change more than closing brackets and commas/);
  });

  it('escapes only line feeds, carriage returns and tabs: other raw control characters are still refused', () => {
    expectRefused('{"a":"bell\u0007here"}', /not valid JSON|would change more/);
    expectRefused('{"a":"nul\u0000here"}', /not valid JSON|would change more/);
    expectRefused('{"a":"form\ffeed"}', /not valid JSON|would change more/);
  });

  it('still gives up on a string cut off after a raw line break', () => {
    expectRefused('{"content":"line one\nline tw', /cut off inside a string/);
  });

  it('does not close a container with the wrong bracket', () => {
    expectRefused('{"a":[}', /would change more/);
    expectRefused('{"a":[1,2]]', /would change more/);
  });

  it('refuses empty arguments when the tool does not accept {}', () => {
    expect(parse('', false)).toEqual({ ok: false, problem: expect.stringMatching(/arguments are empty/) as unknown });
    expect(parse('  \n ', false).ok).toBe(false);
  });

  it('turns empty arguments into {} with the rung "empty_object" when the tool accepts {}', () => {
    expect(parse('')).toEqual({ ok: true, value: {}, repair: 'empty_object' });
    expect(parse(' \t\n')).toEqual({ ok: true, value: {}, repair: 'empty_object' });
  });

  it('does not consult the tool for non-empty arguments', () => {
    let asked = 0;
    parseArgumentsJson('{"a":1}', {
      acceptsEmpty: () => {
        asked += 1;
        return true;
      },
    });
    expect(asked).toBe(0);
  });

  it('passes a top-level array or string through as parsed, for the caller to reject', () => {
    expect(parse('[1,2]')).toEqual({ ok: true, value: [1, 2], repair: 'none' });
    expect(parse('"{\\"a\\":1}"')).toEqual({ ok: true, value: '{"a":1}', repair: 'none' });
  });
});
