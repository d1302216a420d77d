import { roundRandom } from './prng.js';

export type WorkKind = 'workflow' | 'job' | 'once' | 'cron' | 'turn';

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** One piece of work a round submits; `agentId` is its own, so it can be found after a crash. */
export interface WorkItem {
  readonly kind: WorkKind;
  readonly round: number;
  readonly agentId: string;
  /** When it is submitted, after the round's start. */
  readonly submitAtMs: number;
  /** The replica slot it is sent to (PostgreSQL; always 0 on SQLite). */
  readonly slot: number;
  readonly path: '/workflows' | '/background-jobs' | '/schedules' | '/turns';
  readonly body: { [key: string]: Json };
  /** Workflows: the `agent()` calls the run makes (the fan-out and one more after it). */
  readonly tasks: number;
  /** Background jobs: the script's parts (one per turn), and the messages sent after the job is created. */
  readonly parts: number;
  readonly messages: readonly { readonly afterMs: number; readonly text: string }[];
}

export interface RoundPlan {
  readonly round: number;
  /** When the kill comes, after the round's start. */
  readonly killAtMs: number;
  /** The replica slot killed (PostgreSQL); 0 on SQLite. */
  readonly killSlot: number;
  /** SQLite: whether the restarted process keeps the killed one's INSTANCE_ID (else a new one). */
  readonly sameInstanceId: boolean;
  readonly items: readonly WorkItem[];
}

export interface PlanSettings {
  readonly seed: number;
  readonly slots: number;
  /** `http://127.0.0.1:<port>` of the receiver: webhooks and task markers. */
  readonly receiverOrigin: string;
  /** The longest wait before the kill, in ms. */
  readonly maxKillDelayMs: number;
}

/** The fan-out, then one more call that sees every result: two script rounds per run. */
export const WORKFLOW_SCRIPT =
  "const parts = await Promise.all(args.items.map((item) => agent('work on ' + item, { label: 'work' }))); const summary = await agent('sum up ' + parts.length + ' parts', { label: 'work' }); return { parts, summary };";

/** What a completed run of `tasks` calls returns: each task submits `done <seq>`. */
export function expectedWorkflowResult(tasks: number): Json {
  return { parts: Array.from({ length: tasks - 1 }, (_unused, index) => `done ${index + 1}`), summary: `done ${tasks}` };
}

/**
 * The shell command a main turn runs once as its side effect: appends `M <tag> <nonce>` to
 * markers.log in the agent home and prints the same line, so the turn's stored tool output says
 * which line it wrote. A line no turn's output names came from a turn the kill cut off.
 */
export function markerCommand(tag: string): string {
  return `m="M ${tag} $(date +%s%N)-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"; echo "$m" >> markers.log; echo "$m"`;
}

export const MARKER_LINE = /M (\S+) (\d+-\d+)/g;

/** The work of round `round` and when its kill comes: a function of the seed and the round only. */
export function planRound(round: number, settings: PlanSettings): RoundPlan {
  const random = roundRandom(settings.seed, round);
  const webhook = { url: `${settings.receiverOrigin}/hooks` };
  const items: WorkItem[] = [];
  const base = { round, messages: [], tasks: 0, parts: 0 } as const;
  const slot = () => random.int(0, settings.slots - 1);
  const submitAt = () => random.int(0, 400);
  const delay = () => random.int(0, 800);
  const markerStep = (tag: string): Json => ({ delayMs: delay(), calls: [{ name: 'run_command', arguments: { command: markerCommand(tag) } }] });

  for (let index = 1; index <= 2; index += 1) {
    const agentId = `r${round}-wf${index}`;
    const fanOut = random.int(8, 10);
    const taskSteps: Json = [
      { delayMs: delay(), calls: [{ name: 'web_fetch', arguments: { urls: [`${settings.receiverOrigin}/mark/${agentId}/{{seq}}/{{attempt}}`] } }] },
      { delayMs: random.int(0, 300), calls: [{ name: 'submit_result', arguments: { result: { value: 'done {{seq}}' } } }] },
    ];
    items.push({
      ...base,
      kind: 'workflow',
      agentId,
      submitAtMs: submitAt(),
      slot: slot(),
      path: '/workflows',
      tasks: fanOut + 1,
      body: {
        agent: { id: agentId, tools: { web: true } },
        title: `torture ${agentId}`,
        script: WORKFLOW_SCRIPT,
        args: { items: Array.from({ length: fanOut }, (_unused, item) => `item ${item + 1}`) },
        concurrency: 8,
        model: { tasks: { work: taskSteps } },
        webhook,
      },
    });
  }

  const jobs = random.int(1, 2);
  for (let index = 1; index <= jobs; index += 1) {
    const agentId = `r${round}-job${index}`;
    const parts = 6;
    const script: Json[] = [];
    for (let part = 1; part <= parts; part += 1) script.push(markerStep(`job-part-${part}`), { delayMs: random.int(100, 900), text: `answer ${part}` });
    const messages = Array.from({ length: random.int(1, 2) }, (_unused, message) => ({ afterMs: random.int(50, 1_200), text: `message ${message + 1} for ${agentId}` }));
    items.push({
      ...base,
      kind: 'job',
      agentId,
      submitAtMs: submitAt(),
      slot: slot(),
      path: '/background-jobs',
      parts,
      messages,
      body: { agent: { id: agentId, tools: { computer: true } }, title: `torture ${agentId}`, instructions: 'Answer each message once.', model: { script }, webhook },
    });
  }

  const fireModel = (): Json => ({ script: [markerStep('fire'), { delayMs: delay(), text: 'fired' }] });
  const onces = random.int(1, 2);
  for (let index = 1; index <= onces; index += 1) {
    const agentId = `r${round}-once${index}`;
    items.push({
      ...base,
      kind: 'once',
      agentId,
      submitAtMs: submitAt(),
      slot: slot(),
      path: '/schedules',
      body: { agent: { id: agentId, tools: { computer: true } }, kind: 'once', delaySeconds: random.int(1, 3), prompt: 'wake up', model: fireModel(), webhook },
    });
  }
  if (round === 1 || random.chance(0.3)) {
    const agentId = `r${round}-cron1`;
    items.push({
      ...base,
      kind: 'cron',
      agentId,
      submitAtMs: submitAt(),
      slot: slot(),
      path: '/schedules',
      body: { agent: { id: agentId, tools: { computer: true } }, kind: 'cron', cron: '*/2 * * * * *', prompt: 'tick', model: fireModel(), webhook },
    });
  }

  const turns = random.int(1, 2);
  for (let index = 1; index <= turns; index += 1) {
    const agentId = `r${round}-turn${index}`;
    items.push({
      ...base,
      kind: 'turn',
      agentId,
      submitAtMs: submitAt(),
      slot: slot(),
      path: '/turns',
      body: { agent: { id: agentId, tools: { computer: true } }, input: 'leave one mark', model: { script: [markerStep('turn'), { delayMs: random.int(0, 1_500), text: 'marked' }] }, webhook },
    });
  }

  return { round, killAtMs: random.int(0, settings.maxKillDelayMs), killSlot: slot(), sameInstanceId: random.chance(0.5), items };
}
