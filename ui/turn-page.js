import { Unauthorized, askForToken, followEvents, formatDuration, getJson } from './api.js';
import { layoutTimeline } from './timeline-layout.js';

const turnId = decodeURIComponent(location.pathname.split('/').pop() ?? '');
const notice = document.querySelector('#notice');
const timeline = document.querySelector('#timeline');
const details = document.querySelector('#details');
const events = [];
let renderScheduled = false;
let ticker;

document.querySelector('#turn-id').textContent = turnId;
document.title = `${turnId} · turn-runtime inspector`;

function element(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  if (options.className !== undefined) node.className = options.className;
  if (options.text !== undefined) node.textContent = options.text;
  for (const [key, value] of Object.entries(options.data ?? {})) node.dataset[key] = String(value);
  node.append(...children);
  return node;
}

function renderSummary(record) {
  const summary = document.querySelector('#summary');
  const facts = [
    ['Status', record.status],
    ['Agent', record.agentId],
    ['Kind', record.kind],
    ['Model', record.model],
    ['Outcome', record.outcome ?? '—'],
    ['Iterations', String(record.iterations)],
    ['Tokens in / out', `${record.usage.inputTokens} / ${record.usage.outputTokens}`],
    ['Started', new Date(record.createdAt).toLocaleString()],
    ['Duration', record.finishedAt === null ? 'running' : formatDuration(Date.parse(record.finishedAt) - Date.parse(record.createdAt))],
  ];
  const list = element('dl');
  for (const [name, value] of facts) list.append(element('dt', { text: name }), element('dd', { text: value, className: name === 'Status' ? `status status-${value}` : undefined }));
  summary.replaceChildren(list);
  if (record.error !== null) summary.append(element('p', { className: 'error', text: `${record.error.code}: ${record.error.message}` }));
  if (record.output) summary.append(element('blockquote', { text: record.output }));
}

function ticks(spanMs) {
  const step = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000, 300_000].find((candidate) => spanMs / candidate <= 8) ?? 600_000;
  const values = [];
  for (let value = 0; value <= spanMs; value += step) values.push(value);
  return values;
}

function showDetails(bar) {
  details.hidden = false;
  const title = bar.kind === 'model' ? `Model call ${bar.iteration}` : `${bar.name} (${bar.callId})`;
  const body = bar.kind === 'model' ? { iteration: bar.iteration, durationMs: bar.durationMs, status: bar.status, text: bar.text } : bar.events;
  details.replaceChildren(element('h3', { text: title }), element('pre', { text: JSON.stringify(body, null, 2) }));
}

function render() {
  renderScheduled = false;
  const layout = layoutTimeline(events, Date.now());
  const status = layout.terminal === undefined ? (events.length === 0 ? 'loading' : 'running') : layout.terminal.type.slice('turn.'.length);
  timeline.dataset.turnStatus = status;
  const percent = (ms) => `${((ms / layout.spanMs) * 100).toFixed(3)}%`;
  const axis = element('div', { className: 'axis' }, ...ticks(layout.spanMs).map((ms) => {
    const tick = element('span', { className: 'tick', text: formatDuration(ms) || '0' });
    tick.style.left = percent(ms);
    return tick;
  }));
  const lanes = [];
  for (let lane = 0; lane < layout.lanes; lane += 1) {
    const track = element('div', { className: 'track' });
    lanes.push(element('div', { className: 'lane', data: { lane } }, element('div', { className: 'lane-name', text: lane === 0 ? 'model' : `tools ${lane}` }), track));
  }
  for (const bar of layout.bars) {
    const badges = [];
    if (bar.repair !== undefined && bar.repair !== 'none') badges.push(element('span', { className: 'badge repair', text: `repaired: ${bar.repair}` }));
    if (bar.error !== undefined) badges.push(element('span', { className: 'badge failure', text: bar.error.code }));
    if (bar.status === 'cancelled') badges.push(element('span', { className: 'badge failure', text: 'cancelled' }));
    const text = `${bar.label}${bar.endMs > bar.startMs || bar.durationMs ? ` · ${formatDuration(bar.durationMs ?? bar.endMs - bar.startMs)}` : ''}`;
    // A bar too short for its words carries them beside it.
    const narrow = (bar.endMs - bar.startMs) / layout.spanMs < 0.12;
    const inner = element('span', { className: 'bar-inner' }, element('span', { className: 'bar-label', text }), ...badges);
    const side = bar.startMs / layout.spanMs > 0.6 ? ' bar-narrow-left' : '';
    const node = element('button', { className: `bar bar-${bar.kind} bar-${bar.status}${narrow ? ` bar-narrow${side}` : ''}`, data: { kind: bar.kind, status: bar.status, lane: bar.lane, ...(bar.callId === undefined ? { iteration: bar.iteration } : { callId: bar.callId }) } }, inner);
    node.type = 'button';
    node.title = `${text}${bar.error === undefined ? '' : `\n${bar.error.message}`}`;
    node.style.left = percent(bar.startMs);
    node.style.width = `max(4px, ${percent(bar.endMs - bar.startMs)})`;
    node.addEventListener('click', () => showDetails(bar));
    lanes[bar.lane]?.querySelector('.track')?.append(node);
  }
  const nodes = [axis, ...lanes];
  if (layout.terminal?.type === 'turn.cancelled') {
    const marker = element('div', { className: 'end-marker cancelled', text: `cancelled: ${layout.terminal.reason}` });
    marker.style.left = '100%';
    nodes.push(marker);
  } else if (layout.terminal?.type === 'turn.failed') {
    nodes.push(element('p', { className: 'error', text: `turn failed: ${layout.terminal.error.code}: ${layout.terminal.error.message}` }));
  }
  timeline.replaceChildren(...nodes);
  document.querySelector('#event-count').textContent = String(events.length);
  document.querySelector('#events').textContent = events.map((event) => JSON.stringify(event)).join('\n');
}

function scheduleRender() {
  if (renderScheduled) return;
  renderScheduled = true;
  requestAnimationFrame(render);
}

async function renderTools() {
  const tools = await getJson(`/turns/${encodeURIComponent(turnId)}/tools`);
  const container = document.querySelector('#tools');
  container.replaceChildren(
    ...tools.providerToolsByIteration.map((entry) => {
      const names = entry.providerTools.map((tool) => tool.name ?? tool.type).join(', ');
      return element('details', { data: { iteration: entry.iteration } }, element('summary', { text: `From iteration ${entry.iteration}: ${entry.providerTools.length} tools (${names})` }), element('pre', { text: JSON.stringify(entry.providerTools, null, 2) }));
    }),
  );
  if (tools.unavailableSources.length > 0) {
    container.append(element('p', { text: `Unavailable: ${tools.unavailableSources.map((source) => `${source.source} (${source.reason})`).join('; ')}` }));
  }
}

async function main() {
  try {
    renderSummary(await getJson(`/turns/${encodeURIComponent(turnId)}`));
    void renderTools().catch((error) => (notice.textContent = `tools: ${error.message}`));
    ticker = setInterval(scheduleRender, 250);
    await followEvents(turnId, {
      onEvent: (event) => {
        events.push(event);
        scheduleRender();
      },
    });
    clearInterval(ticker);
    scheduleRender();
    renderSummary(await getJson(`/turns/${encodeURIComponent(turnId)}`));
  } catch (error) {
    clearInterval(ticker);
    if (error instanceof Unauthorized) return askForToken(notice, () => location.reload());
    notice.textContent = error.message;
  }
}

void main();
