// Lays a turn's events out on a time axis: one bar per model call (lane 0) and one per tool
// call, tool calls in as many lanes as overlap, so parallel calls sit in parallel lanes.
// Pure: events in, geometry-free bars out (times in ms from the turn's start). The page then
// asks axisTicks and placeLabels, also pure, where ticks and labels go on the drawn widths.

const TERMINAL = new Set(['turn.completed', 'turn.failed', 'turn.cancelled']);

export function layoutTimeline(events, nowMs) {
  const started = events.find((event) => event.type === 'turn.started');
  if (started === undefined) return { spanMs: 0, lanes: 1, bars: [], terminal: undefined };
  const t0 = Date.parse(started.at);
  const at = (event) => Date.parse(event.at) - t0;
  const terminal = events.find((event) => TERMINAL.has(event.type));
  const endMs = terminal === undefined ? Math.max(nowMs - t0, 0) : at(terminal);

  const tools = new Map();
  const approvals = new Map();
  const byIteration = new Map();
  const iterationOf = (number) => {
    if (!byIteration.has(number)) byIteration.set(number, { messageAt: undefined, firstToolAt: undefined, lastToolEnd: undefined, text: '' });
    return byIteration.get(number);
  };
  for (const event of events) {
    if (typeof event.iteration === 'number') {
      const iteration = iterationOf(event.iteration);
      if (event.type === 'message.completed') {
        iteration.messageAt = at(event);
        iteration.text = event.text;
      }
      if (event.type.startsWith('tool.') && iteration.firstToolAt === undefined) iteration.firstToolAt = at(event);
      if (event.type === 'tool.completed' || event.type === 'tool.failed') iteration.lastToolEnd = Math.max(iteration.lastToolEnd ?? 0, at(event));
    }
    if (event.type === 'tool.started') {
      tools.set(event.callId, { kind: 'tool', callId: event.callId, name: event.name, label: event.label, iteration: event.iteration, repair: event.repair, executionMode: event.executionMode, startMs: at(event), endMs: undefined, status: 'running', events: [event] });
    } else if (event.type === 'tool.completed' || event.type === 'tool.failed') {
      const tool = tools.get(event.callId) ?? { kind: 'tool', callId: event.callId, name: event.name, label: event.label ?? event.name, iteration: event.iteration, repair: event.repair ?? 'none', startMs: at(event), events: [] };
      tool.endMs = at(event);
      tool.label = event.label ?? tool.label;
      tool.durationMs = event.durationMs;
      tool.status = event.type === 'tool.completed' ? 'completed' : 'failed';
      if (event.type === 'tool.failed') {
        tool.error = event.error;
        // How far a cancelled or timed-out call got: not_started, cancelled or maybe_ran.
        if (event.outcome !== undefined) tool.outcome = event.outcome;
      }
      tool.events.push(event);
      tools.set(event.callId, tool);
    } else if (event.type === 'tool.presentation') {
      tools.get(event.callId)?.events.push(event);
    } else if (event.type === 'tool.approval_requested') {
      approvals.set(event.callId, { kind: 'approval', callId: event.callId, name: event.name, label: `Waiting for approval: ${event.label ?? event.name}`, iteration: event.iteration, startMs: at(event), endMs: undefined, status: 'waiting', events: [event] });
    } else if (event.type === 'tool.approval_decided') {
      const approval = approvals.get(event.callId);
      if (approval !== undefined) {
        approval.endMs = at(event);
        approval.status = event.decision === 'approve' ? 'approved' : 'denied';
        approval.label = `${event.decision === 'approve' ? 'Approved' : 'Denied'}: ${approval.name}`;
        approval.events.push(event);
      }
    }
  }

  // Model calls: iteration n runs from the end of the tools of n - 1 (the turn's start for
  // the first) until its text completed or its first call started.
  const seen = [...byIteration.keys()];
  let count = terminal?.iterations ?? Math.max(0, ...seen);
  const last = byIteration.get(count);
  if (terminal === undefined && (count === 0 || (last !== undefined && last.firstToolAt !== undefined && [...tools.values()].every((tool) => tool.endMs !== undefined)))) count += 1;
  const bars = [];
  let previousEnd = 0;
  for (let number = 1; number <= count; number += 1) {
    const iteration = byIteration.get(number);
    const end = iteration?.messageAt ?? iteration?.firstToolAt;
    const bar = { kind: 'model', iteration: number, label: `Model call ${number}`, startMs: previousEnd, endMs: end ?? endMs, status: 'completed', lane: 0, text: iteration?.text ?? '' };
    if (end === undefined) {
      if (terminal === undefined) bar.status = 'running';
      else if (terminal.type === 'turn.cancelled') bar.status = 'cancelled';
      else if (terminal.type === 'turn.failed' && number === count) bar.status = 'failed';
    }
    bar.durationMs = bar.endMs - bar.startMs;
    bars.push(bar);
    previousEnd = iteration?.lastToolEnd ?? bar.endMs;
  }

  // Tool lanes: the first lane whose last call ended before this one started.
  const laneEnds = [];
  const callBars = [...approvals.values(), ...tools.values()].sort((a, b) => a.startMs - b.startMs);
  for (const bar of callBars) {
    if (bar.endMs === undefined) {
      bar.endMs = endMs;
      if (terminal !== undefined && bar.status === 'running') bar.status = 'cancelled';
    }
    let lane = laneEnds.findIndex((lane) => lane.endMs < bar.startMs || (lane.endMs === bar.startMs && lane.iteration !== bar.iteration));
    if (lane === -1) {
      lane = laneEnds.length;
      laneEnds.push({ endMs: 0, iteration: 0 });
    }
    laneEnds[lane] = { endMs: bar.endMs, iteration: bar.iteration };
    bar.lane = lane + 1;
    bars.push(bar);
  }
  return { spanMs: Math.max(endMs, 1), lanes: laneEnds.length + 1, bars, terminal };
}

// Tick steps a reader can add up: 1, 2, 5 × 10ⁿ ms, then whole seconds, minutes and hours.
const TICK_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];

// The least room between two ticks: the widest label formatDuration makes ("10 min 30 s", about
// 60 px at the axis's size) and a gap. Counting ticks by the axis's drawn width, not a fixed
// number, keeps the labels apart on a narrow screen as on a wide one.
export const MIN_TICK_GAP_PX = 80;

export function axisTicks(spanMs, widthPx) {
  const most = Math.max(1, Math.floor(widthPx / MIN_TICK_GAP_PX));
  const step = TICK_STEPS.find((candidate) => spanMs / candidate <= most) ?? 3_600_000 * Math.ceil(spanMs / most / 3_600_000);
  const values = [];
  for (let value = 0; value <= spanMs; value += step) values.push(value);
  return values;
}

// Where each bar's label goes, in pixels along its lane's track (so it needs the drawn widths):
// inside its bar when it fits there; else beside it, after it or else before it, where that is
// clear of the lane's bars and of the labels placed so far; else under its bar, in the first row
// there where it meets no other label. A turn whose calls all happen within a few milliseconds
// puts its bars a few pixels apart, and labels beside them would be drawn over each other.
//   bars: [{ left, right, labelWidth, padding }] in track pixels (padding: the bar's own, both
//   sides), any order; widthPx: the track's width.
// Returns { placements, rows }: placements in the order of `bars`, each { inside, x, row } (x:
// the label's left edge in track pixels; row 0 is the bars' own); rows: how many rows under the
// bars are used.
export function placeLabels(bars, widthPx, gapPx = 5) {
  const placements = bars.map(() => undefined);
  // Row 0 holds the bars themselves; every row, the labels placed in it.
  const taken = [bars.map((bar) => [bar.left, bar.right])];
  const clear = (row, left, right) => (taken[row] ?? []).every(([takenLeft, takenRight]) => right + gapPx <= takenLeft || takenRight + gapPx <= left);
  const order = bars.map((bar, index) => index).sort((a, b) => bars[a].left - bars[b].left);
  for (const index of order) {
    const bar = bars[index];
    if (bar.labelWidth + bar.padding <= bar.right - bar.left) {
      placements[index] = { inside: true, x: bar.left + bar.padding / 2, row: 0 };
      continue;
    }
    const width = bar.labelWidth;
    const after = bar.right + gapPx;
    const before = bar.left - gapPx - width;
    let placement;
    if (after + width <= widthPx && clear(0, after, after + width)) placement = { inside: false, x: after, row: 0 };
    else if (before >= 0 && clear(0, before, before + width)) placement = { inside: false, x: before, row: 0 };
    else {
      // Under the bar, starting where it starts or, near the track's end, ending where it ends,
      // so that a reader can tell which bar it names.
      const x = bar.left + width <= widthPx ? bar.left : Math.max(0, bar.right - width);
      let row = 1;
      while (!clear(row, x, x + width)) row += 1;
      placement = { inside: false, x, row };
    }
    taken[placement.row] ??= [];
    taken[placement.row].push([placement.x, placement.x + width]);
    placements[index] = placement;
  }
  return { placements, rows: taken.length - 1 };
}
