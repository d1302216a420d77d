import type { WorkerAgentTool } from '../../tools/define-worker-tool.js';
import type { TurnOrigin } from '../turn-origin.js';
import type { TurnRequest } from '../turn-request.js';
import type { WorkRequest } from '../work-request.js';

/** A source the agent asked for that this server cannot serve: it contributes no tool. */
export interface UnavailableSource {
  readonly source: string;
  readonly reason: string;
}

/** The main text turn a source adds tools to: work its tools start inherits its agent, model and webhook. */
export interface ToolSourceTurn {
  readonly id: string;
  readonly agent: TurnRequest['agent'];
  readonly model: TurnRequest['model'];
  readonly webhook: TurnRequest['webhook'];
  readonly origin: TurnOrigin;
}

/** The `agent.tools` keys whose tools a feature built on turns provides. */
export type FeatureToolKey = 'schedule' | 'backgroundJobs' | 'workflows' | 'brain';

/**
 * Tools that a feature built on turns (schedules, background jobs, workflows, Brain) adds to a
 * main text turn whose agent asks for them. The turn core defines this and never imports a
 * feature; runtime.ts plugs each source in. A key with no source is an unavailable source.
 */
export interface ToolSource {
  /** This turn's tools; none (an empty list) where the feature declines, as jobs do inside a job's own turns. */
  tools(turn: ToolSourceTurn): readonly WorkerAgentTool[];
}

/** The feature tool sources this server has, by the key that asks for them. */
export type ToolSources = Readonly<Partial<Record<FeatureToolKey, ToolSource>>>;

/** The work a tool starts on behalf of a turn: its agent, model and webhook. */
export function workRequestOf(turn: ToolSourceTurn): WorkRequest {
  return { agent: turn.agent, model: turn.model, ...(turn.webhook === undefined ? {} : { webhook: turn.webhook }) };
}
