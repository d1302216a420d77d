import { Unauthorized, askForToken, formatDuration, getJson } from './api.js';

const form = document.querySelector('#filters');
const body = document.querySelector('#turns tbody');
const notice = document.querySelector('#notice');
let timer;

function readFilters() {
  const params = new URLSearchParams(location.search);
  for (const name of ['agentId', 'status', 'limit']) {
    if (params.has(name)) form.elements[name].value = params.get(name);
  }
}

function query() {
  const params = new URLSearchParams();
  for (const name of ['agentId', 'status', 'limit']) {
    const value = form.elements[name].value.trim();
    if (value !== '') params.set(name, value);
  }
  return params;
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className !== undefined) td.className = className;
  return td;
}

async function load() {
  clearTimeout(timer);
  let answer;
  try {
    answer = await getJson(`/turns?${query()}`);
  } catch (error) {
    if (error instanceof Unauthorized) return askForToken(notice, load);
    notice.textContent = `Could not list turns: ${error.message}`;
    return;
  }
  notice.textContent = answer.turns.length === 0 ? 'No turns match.' : '';
  body.replaceChildren(
    ...answer.turns.map((turn) => {
      const row = document.createElement('tr');
      row.dataset.turnId = turn.id;
      row.dataset.status = turn.status;
      row.dataset.agentId = turn.agentId;
      const link = document.createElement('a');
      link.href = `/ui/turns/${encodeURIComponent(turn.id)}`;
      link.textContent = turn.id;
      const first = cell('');
      first.append(link);
      const finished = turn.finishedAt === null ? Date.now() : Date.parse(turn.finishedAt);
      row.append(
        first,
        cell(turn.agentId),
        cell(turn.status, `status status-${turn.status}`),
        cell(turn.kind),
        cell(turn.model),
        cell(new Date(turn.createdAt).toLocaleString()),
        cell(formatDuration(finished - Date.parse(turn.createdAt))),
        cell(String(turn.iterations)),
        cell(`${turn.usage.inputTokens} / ${turn.usage.outputTokens}`),
      );
      return row;
    }),
  );
  // Keep a list with running turns current.
  if (answer.turns.some((turn) => turn.status === 'running')) timer = setTimeout(load, 3000);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  history.replaceState(null, '', `/ui?${query()}`);
  void load();
});
readFilters();
void load();
