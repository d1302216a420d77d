// Lays a turn's events out on a time axis: one bar per model call (lane 0) and one per tool
// call, tool calls in as many lanes as overlap, so parallel calls sit in parallel lanes.
// Pure: events in, geometry-free bars out (times in ms from the turn's start).

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
      if (event.type === 'tool.failed') tool.error = event.error;
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
