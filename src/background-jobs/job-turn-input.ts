import type { InputItem } from '../turns/turn-request.js';
import type { WorkRequest } from '../turns/work-request.js';

/** A turn of the job as the next one is told about it. */
export interface EarlierJobTurn {
  readonly index: number;
  readonly outcome: string | null;
  readonly output: string | null;
}

export const CUT_OFF_NOTE =
  'Note: your previous turn in this background job was cut off before it finished (the service restarted), so its work may be incomplete and its answer is missing. Check what was already done before repeating anything, then carry on.';

/**
 * The input of job turn `index`: the job's instructions, then for each earlier turn the
 * messages it got and its answer (a cut-off turn is said to be so), then the messages queued
 * for this turn. Each turn is a fresh conversation, so this is the job's memory.
 */
export function buildJobTurnInput(options: {
  readonly title: string;
  readonly instructions: string;
  readonly earlier: readonly EarlierJobTurn[];
  readonly messagesByTurn: ReadonlyMap<number, readonly string[]>;
  readonly index: number;
}): InputItem[] {
  const items: InputItem[] = [
    { role: 'user', content: `You are running the background job "${options.title}". Nobody is waiting on this conversation; work until the job is done, then answer with the result.\n\nInstructions:\n${options.instructions}` },
  ];
  const messagesFor = (index: number) => {
    const texts = options.messagesByTurn.get(index) ?? [];
    if (texts.length > 0) items.push({ role: 'user', content: describeMessages(texts) });
  };
  for (const turn of options.earlier) {
    if (turn.index > 1) messagesFor(turn.index);
    if (turn.output !== null && turn.output !== '') items.push({ role: 'assistant', content: turn.output });
    if (turn.outcome === 'interrupted') items.push({ role: 'user', content: CUT_OFF_NOTE });
  }
  if (options.index > 1) messagesFor(options.index);
  return items;
}

function describeMessages(texts: readonly string[]): string {
  if (texts.length === 1) return `A new message for this job arrived while you worked:\n${texts[0] ?? ''}`;
  return `${texts.length} new messages for this job arrived while you worked:\n${texts.map((text, index) => `${index + 1}. ${text}`).join('\n')}`;
}

/**
 * The model of job turn `index`. A provider model is the same for every turn. A script is
 * one script for the whole job, cut into turns: each turn plays the steps up to and including
 * the next step without calls (the step that answers), and the next turn goes on from there.
 * A turn past the end gets an empty script (it answers nothing).
 */
export function jobTurnModel(model: WorkRequest['model'], index: number): WorkRequest['model'] {
  if (!('script' in model)) return model;
  const segments: (typeof model.script)[] = [];
  let current: typeof model.script = [];
  for (const step of model.script) {
    current.push(step);
    if (step.calls === undefined || step.calls.length === 0) {
      segments.push(current);
      current = [];
    }
  }
  if (current.length > 0) segments.push(current);
  return { script: segments[index - 1] ?? [] };
}
