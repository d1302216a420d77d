import { z } from 'zod';
import { scriptStepSchema, type ScriptStepInput, type TurnRequest } from '../turns/turn-request.js';

/**
 * The model of a run's task turns. `{name}`: the configured provider. The scripted model:
 * `script` (every task turn runs these steps) and/or `tasks` (steps per `agent()` label:
 * `"<label>#<attempt>"` first, then `"<label>"`, then `"*"`, then `script`). In a step's
 * text and call arguments, `{{prompt}}`, `{{label}}`, `{{attempt}}` and `{{seq}}` are
 * replaced by the task's own, so one script can drive a whole workflow.
 */
const providerModelSchema = z.strictObject({ name: z.string().min(1).max(200).optional() });
const scriptedModelSchema = z
  .strictObject({
    script: z.array(scriptStepSchema).max(500).optional(),
    tasks: z.record(z.string().min(1).max(210), z.array(scriptStepSchema).max(500)).optional(),
  })
  .refine((model) => model.script !== undefined || model.tasks !== undefined, 'give `script`, `tasks` or both');

export const workflowModelSchema = z.union([providerModelSchema, scriptedModelSchema]);

export type WorkflowModel = z.infer<typeof workflowModelSchema>;
type ScriptedModel = z.infer<typeof scriptedModelSchema>;

function isScripted(model: WorkflowModel): model is ScriptedModel {
  return 'script' in model || 'tasks' in model;
}

/** The model request of one task attempt. */
export function taskModelRequest(options: {
  readonly model: WorkflowModel;
  readonly label: string | null;
  readonly attempt: number;
  readonly prompt: string;
  readonly seq: number;
}): TurnRequest['model'] {
  const { model } = options;
  if (!isScripted(model)) return 'name' in model && model.name !== undefined ? { name: model.name } : {};
  const tasks = model.tasks ?? {};
  const label = options.label ?? '';
  const steps = pick(tasks, `${label}#${options.attempt}`) ?? pick(tasks, label) ?? pick(tasks, '*') ?? model.script ?? [];
  const values: Record<string, string> = { prompt: options.prompt, label, attempt: String(options.attempt), seq: String(options.seq) };
  return { script: steps.map((step) => fillStep(step, values)) };
}

function pick(tasks: Record<string, ScriptStepInput[]>, key: string): ScriptStepInput[] | undefined {
  return Object.hasOwn(tasks, key) ? tasks[key] : undefined;
}

const PLACEHOLDER = /\{\{(prompt|label|attempt|seq)\}\}/g;

function fillStep(step: ScriptStepInput, values: Record<string, string>): ScriptStepInput {
  const fill = (text: string, escape: (value: string) => string) => text.replace(PLACEHOLDER, (_match, name: string) => escape(values[name] ?? ''));
  const plain = (value: string) => value;
  // Inside a raw JSON arguments string, a value goes in as the content of a JSON string.
  const inJson = (value: string) => JSON.stringify(value).slice(1, -1);
  return {
    ...step,
    ...(step.text === undefined ? {} : { text: fill(step.text, plain) }),
    ...(step.calls === undefined
      ? {}
      : {
          calls: step.calls.map((call) => ({
            ...call,
            arguments: typeof call.arguments === 'string' ? fill(call.arguments, inJson) : (fillValue(call.arguments, (text) => fill(text, plain)) as Record<string, unknown>),
          })),
        }),
  };
}

function fillValue(value: unknown, fill: (text: string) => string): unknown {
  if (typeof value === 'string') return fill(value);
  if (Array.isArray(value)) return value.map((item) => fillValue(item, fill));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillValue(item, fill)]));
  return value;
}
