import { Unauthorized, askForToken, followEvents, formatDuration, getJson } from './api.js';
import { axisTicks, layoutTimeline, placeLabels } from './timeline-layout.js';

const turnId = decodeURIComponent(location.pathname.split('/').pop() ?? '');
const notice = document.querySelector('#notice');
const timeline = document.querySelector('#timeline');
const details = document.querySelector('#details');
const events = [];
let renderScheduled = false;
let ticker;
let drawnWidth;

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

// The height of a row of labels under a lane's bars, and the lane's own (as in inspector.css).
/** How far a cancelled or timed-out call got, in words (the event's `outcome`). */
const OUTCOME_WORDS = { not_started: 'not started', cancelled: 'stopped, processes gone', maybe_ran: 'may have run' };

const LABEL_ROW_REM = 1.1;
const LANE_REM = 1.9;

// Ticks are counted on the axis's drawn width, so this runs once the axis is on the page. A
// label that would reach past the axis's end is right-aligned to its tick instead, and one that
// would still meet the label before it is left out.
function drawTicks(axis, spanMs) {
  const ticks = axisTicks(spanMs, axis.clientWidth).map((ms) => {
    const tick = element('span', { className: 'tick', text: formatDuration(ms) || '0' });
    tick.style.left = `${((ms / spanMs) * 100).toFixed(3)}%`;
    return tick;
  });
  axis.append(...ticks);
  const end = axis.getBoundingClientRect().right;
  let previousRight = -Infinity;
  for (const tick of ticks) {
    if (tick.getBoundingClientRect().right > end) tick.classList.add('tick-end');
    const box = tick.getBoundingClientRect();
    if (box.left < previousRight + 4) tick.remove();
    else previousRight = box.right;
  }
}

// Bars are drawn with their labels beside them (class bar-narrow), which is where a label's
// full width can be measured; placeLabels then says which stay beside, which move inside their
// bar and which drop to rows under the bars, and the lane grows to hold those rows.
function placeBarLabels(lane) {
  const track = lane.querySelector('.track');
  const origin = track.getBoundingClientRect().left;
  const nodes = [...track.querySelectorAll('.bar')];
  const bars = nodes.map((node) => {
    const box = node.getBoundingClientRect();
    const style = window.getComputedStyle(node);
    return { left: box.left - origin, right: box.right - origin, labelWidth: node.querySelector('.bar-inner').getBoundingClientRect().width, padding: parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) };
  });
  const { placements, rows } = placeLabels(bars, track.clientWidth);
  placements.forEach((placement, index) => {
    const node = nodes[index];
    const inner = node.querySelector('.bar-inner');
    node.classList.toggle('bar-narrow', !placement.inside);
    node.classList.toggle('bar-label-below', placement.row > 0);
    if (placement.inside) return;
    inner.style.left = `${(placement.x - bars[index].left).toFixed(1)}px`;
    if (placement.row > 0) inner.style.top = `calc(100% + ${(0.15 + (placement.row - 1) * LABEL_ROW_REM).toFixed(2)}rem)`;
  });
  if (rows > 0) lane.style.height = `${LANE_REM + rows * LABEL_ROW_REM}rem`;
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
  const axis = element('div', { className: 'axis' });
  const lanes = [];
  for (let lane = 0; lane < layout.lanes; lane += 1) {
    const track = element('div', { className: 'track' });
    lanes.push(element('div', { className: 'lane', data: { lane } }, element('div', { className: 'lane-name', text: lane === 0 ? 'model' : `tools ${lane}` }), track));
  }
  for (const bar of layout.bars) {
    const badges = [];
    if (bar.repair !== undefined && bar.repair !== 'none') badges.push(element('span', { className: 'badge repair', text: `repaired: ${bar.repair}` }));
    if (bar.error !== undefined) badges.push(element('span', { className: 'badge failure', text: bar.error.code }));
    if (bar.outcome !== undefined) badges.push(element('span', { className: 'badge outcome', text: OUTCOME_WORDS[bar.outcome] ?? bar.outcome, data: { outcome: bar.outcome } }));
    if (bar.status === 'cancelled') badges.push(element('span', { className: 'badge failure', text: 'cancelled' }));
    const text = `${bar.label}${bar.endMs > bar.startMs || bar.durationMs ? ` · ${formatDuration(bar.durationMs ?? bar.endMs - bar.startMs)}` : ''}`;
    // Labels start beside their bars, to be measured, and are placed once drawn (placeBarLabels).
    const inner = element('span', { className: 'bar-inner' }, element('span', { className: 'bar-label', text }), ...badges);
    const node = element('button', { className: `bar bar-${bar.kind} bar-${bar.status} bar-narrow`, data: { kind: bar.kind, status: bar.status, lane: bar.lane, ...(bar.callId === undefined ? { iteration: bar.iteration } : { callId: bar.callId }) } }, inner);
    node.type = 'button';
    node.title = `${text}${bar.error === undefined ? '' : `\n${bar.error.message}`}${bar.outcome === undefined ? '' : `\noutcome: ${bar.outcome}`}`;
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
  drawnWidth = timeline.clientWidth;
  drawTicks(axis, layout.spanMs);
  for (const lane of lanes) placeBarLabels(lane);
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
  // Ticks and labels are placed on the drawn widths, which a resize changes (as does a scroll
  // bar's appearing when the page grows); a change of height alone changes nothing.
  new window.ResizeObserver(() => {
    if (timeline.clientWidth !== drawnWidth) scheduleRender();
  }).observe(timeline);
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
