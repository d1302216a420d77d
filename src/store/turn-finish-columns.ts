import type { TurnFinish } from './turn-record.js';

/** The columns of `turns` that a turn's end sets, as both store paths write them. */
export interface TurnFinishColumns {
  readonly status: TurnFinish['status'];
  readonly finished_at: string;
  readonly iterations: number;
  readonly output: string | null;
  readonly result_json: string | null;
  readonly error_json: string | null;
  readonly outcome: string | null;
  readonly input_tokens: number;
  readonly output_tokens: number;
}

export function turnFinishColumns(finish: TurnFinish): TurnFinishColumns {
  return {
    status: finish.status,
    finished_at: finish.finishedAt,
    iterations: finish.iterations,
    output: finish.output === null ? null : withoutNul(finish.output),
    result_json: finish.result === undefined ? null : JSON.stringify(finish.result),
    error_json: finish.error === null ? null : JSON.stringify(finish.error),
    outcome: finish.outcome,
    input_tokens: finish.usage.inputTokens,
    output_tokens: finish.usage.outputTokens,
  };
}

/**
 * The model's text with NUL characters replaced: PostgreSQL text cannot hold U+0000, and one
 * would fail the whole finishing transaction, leaving the turn running. The terminal event
 * keeps the exact text (JSON escapes it); SQLite gets the same value, so both dialects agree.
 */
function withoutNul(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}
