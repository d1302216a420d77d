// The inspector's calls to the service API: the bearer token (kept in this browser's
// localStorage, asked for when the API says 401/403) and an NDJSON event reader.

const TOKEN_KEY = 'turn-runtime-token';

export class Unauthorized extends Error {}

export function savedToken() {
  return localStorage.getItem(TOKEN_KEY) ?? '';
}

export function saveToken(token) {
  if (token === '') localStorage.removeItem(TOKEN_KEY);
  else localStorage.setItem(TOKEN_KEY, token);
}

function headers(extra = {}) {
  const token = savedToken();
  return token === '' ? extra : { ...extra, authorization: `Bearer ${token}` };
}

export async function getJson(url) {
  const response = await fetch(url, { headers: headers({ accept: 'application/json' }) });
  if (response.status === 401 || response.status === 403) throw new Unauthorized(`${response.status}`);
  const body = await response.json();
  if (!response.ok) throw new Error(body?.error?.message ?? `HTTP ${response.status}`);
  return body;
}

/**
 * Reads a turn's events as NDJSON: the stored ones, then live ones until the last. Calls
 * `onEvent` for each; resolves when the stream ends (or `signal` aborts).
 */
export async function followEvents(turnId, { onEvent, signal }) {
  const response = await fetch(`/turns/${encodeURIComponent(turnId)}/events`, { headers: headers({ accept: 'application/x-ndjson' }), signal });
  if (response.status === 401 || response.status === 403) throw new Unauthorized(`${response.status}`);
  if (!response.ok || response.body === null) throw new Error(`events: HTTP ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line !== '') onEvent(JSON.parse(line));
      newline = buffered.indexOf('\n');
    }
  }
}

/** A small token form, shown when the API wants a token this browser does not have. */
export function askForToken(container, onSaved) {
  container.replaceChildren();
  const form = document.createElement('form');
  form.className = 'token-form';
  form.innerHTML = '<label>This service needs its API token: <input type="password" name="token" autocomplete="off" required></label> <button type="submit">Use it</button>';
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    saveToken(new FormData(form).get('token').toString().trim());
    onSaved();
  });
  container.append(form);
}

export function formatDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
