/**
 * Runs in the guest before the script: the only host surface is `agent()`, which records the
 * call and returns a promise the host settles later by sequence number. `Math.random` is a
 * seeded generator and the clock is fixed, so replays take the same path.
 */
export function guestPrelude(options: { readonly seed: number; readonly nowMs: number; readonly argsJson: string }): string {
  return `
"use strict";
(() => {
  const pending = new Map();
  const calls = [];
  let nextSeq = 1;
  let state = ${options.seed >>> 0};
  Math.random = function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const NOW = ${options.nowMs};
  const RealDate = Date;
  function FixedDate(...parts) {
    if (!new.target) return new RealDate(NOW).toString();
    return parts.length === 0 ? new RealDate(NOW) : new RealDate(...parts);
  }
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = () => NOW;
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  globalThis.Date = FixedDate;

  function agent(prompt, options) {
    if (typeof prompt !== 'string' || prompt.length === 0) throw new TypeError('agent(prompt): prompt must be a non-empty string');
    if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) throw new TypeError('agent(prompt, options): options must be an object');
    const label = options === undefined || options.label === undefined ? null : options.label;
    if (label !== null && (typeof label !== 'string' || label.length > 200)) throw new TypeError('agent(): label must be a string of at most 200 characters');
    const schema = options === undefined || options.schema === undefined ? null : JSON.stringify(options.schema);
    const seq = nextSeq++;
    calls.push({ seq, prompt, label, schemaJson: schema === undefined ? null : schema });
    return new Promise((resolve) => { pending.set(seq, resolve); });
  }
  Object.defineProperty(globalThis, 'agent', { value: agent, enumerable: false });
  Object.defineProperty(globalThis, 'args', { value: JSON.parse(${JSON.stringify(options.argsJson)}), enumerable: false, writable: true });
  Object.defineProperty(globalThis, '__feed', { value: (seq, json) => {
    const resolve = pending.get(seq);
    if (resolve === undefined) return false;
    pending.delete(seq);
    resolve(JSON.parse(json));
    return true;
  } });
  Object.defineProperty(globalThis, '__takeCalls', { value: () => JSON.stringify(calls.splice(0)) });
  Object.defineProperty(globalThis, '__settle', { value: (promise) => {
    promise.then(
      (value) => {
        try {
          globalThis.__outcome = { ok: true, json: JSON.stringify(value === undefined ? null : value) ?? 'null' };
        } catch (error) {
          globalThis.__outcome = { ok: false, message: 'the result is not JSON: ' + String(error && error.message) };
        }
      },
      (error) => { globalThis.__outcome = { ok: false, message: error instanceof Error ? error.name + ': ' + error.message : String(error) }; },
    );
  } });
})();
`;
}

/** The script as the body of an async function of `agent` and `args`; its return value is the result. */
export function wrapScript(script: string): string {
  return `__settle((async function workflow(agent, args) {\n${script}\n})(agent, args));`;
}
