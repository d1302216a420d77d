import type { Logger } from 'pino';
import type { z } from 'zod';
import { isJsonObject, type JsonObject } from '../json.js';
import { compileJsonSchemaValidator, type SchemaIssue, type ValidationOutcome } from './schema/json-schema-validator.js';
import { StrictSchemaError, toStrictJsonSchema } from './schema/strict-schema.js';
import { zodToJsonSchema } from './schema/zod-to-json-schema.js';
import { ToolDefinitionError } from './tool-definition-error.js';
import type { AgentToolResult, PresentationEvent } from './tool-result.js';
import type { StoppedOutcome } from './call-stopped.js';

export type ExecutionMode = 'parallel' | 'sequential';

/** What `execute` receives beside its validated parameters. */
export interface ToolExecutionContext {
  /** Fires when the turn is cancelled or the call times out; a tool must stop promptly. */
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly logger: Logger;
  /** Streams a presentation event now, while the tool is still running. */
  readonly present: (event: PresentationEvent) => void;
  /**
   * Once `signal` fired: says how far the call got, and is believed. `not_started` when the
   * tool had done nothing yet; `cancelled` when everything it started has stopped (a command's
   * processes are gone). The loop records the call at once, without waiting for `execute` to
   * return (it may still tidy up). Only tools that declare `reportsStop` are waited for.
   */
  readonly reportStopped: (outcome: StoppedOutcome) => void;
}

/** The definition a tool author writes. */
export interface WorkerToolOptions<TParams> {
  /** What the model calls; providers accept `^[A-Za-z0-9_-]{1,64}$`. */
  readonly name: string;
  /** What the tool does, for the model to decide when to call it. */
  readonly description: string;
  /** Input parameters, validated before `execute` runs. */
  readonly schema?: z.ZodType<TParams>;
  /**
   * A raw JSON Schema, sent as given (less `$schema`) instead of one generated from `schema`. Without `schema`
   * it is also the validator (Ajv); with one, `schema` validates and this is what is shown.
   */
  readonly jsonSchema?: JsonObject;
  /** Asks the provider to enforce the parameters schema strictly. */
  readonly strict?: boolean;
  /** Groups related tools into one provider namespace. */
  readonly namespace?: string;
  readonly namespaceDescription?: string;
  /** Keeps the schema behind Tool Search until the model selects the tool. */
  readonly deferLoading?: boolean;
  /** `parallel` only for tools that are read-only and not destructive. */
  readonly executionMode: ExecutionMode;
  readonly isReadOnly: boolean;
  readonly isDestructive: boolean;
  /** Overrides the server's per-call timeout for this tool. */
  readonly timeoutMs?: number;
  /**
   * `execute` calls `context.reportStopped` once its signal fired and it knows how far it got
   * (run_command: when its processes are gone). A stopped call is then recorded only after that
   * report (or after a second, as `maybe_ran`). Without it a stopped call is recorded at once:
   * `cancelled` for a read-only tool, `maybe_ran` for any other.
   */
  readonly reportsStop?: boolean;
  /** A short label from the validated parameters: "Reading notes.md". */
  describeActivity(params: TParams): string;
  /** Replaces the label when the tool completes: "Read notes.md (1.2 KB)". */
  describeCompletedActivity?(params: TParams, result: AgentToolResult): string;
  execute(params: TParams, context: ToolExecutionContext): Promise<AgentToolResult>;
}

interface CompiledToolSchema {
  readonly parameters: JsonObject;
  readonly schemaSource: 'zod' | 'json';
  readonly stripNulls: ((value: unknown) => unknown) | undefined;
  readonly validateJson: ((value: unknown) => ValidationOutcome<JsonObject>) | undefined;
}

/*
 * Tools are created per turn (they close over the turn's home, signal …) but their schemas are
 * module constants, so the conversion is memoised on the schema object: computed once per
 * definition, never per turn. Weak keys: nothing is kept alive, and the memo is a pure cache
 * of a pure function, not state anyone reads.
 */
const zodSchemaMemo = { plain: new WeakMap<z.ZodType, CompiledToolSchema>(), strict: new WeakMap<z.ZodType, CompiledToolSchema>() };
const jsonSchemaMemo = new WeakMap<JsonObject, CompiledToolSchema>();

function compileToolSchema(options: WorkerToolOptions<unknown>, strict: boolean): CompiledToolSchema {
  const { name } = options;
  if (options.jsonSchema !== undefined) {
    const raw = options.jsonSchema;
    const cached = jsonSchemaMemo.get(raw);
    if (cached !== undefined) return cached;
    if (!isJsonObject(raw) || raw['type'] !== 'object') {
      throw new ToolDefinitionError(name, 'a raw jsonSchema must have a root object schema ("type": "object")');
    }
    let validateJson: CompiledToolSchema['validateJson'];
    try {
      validateJson = compileJsonSchemaValidator(raw);
    } catch (error) {
      throw new ToolDefinitionError(name, `its jsonSchema does not compile: ${error instanceof Error ? error.message : String(error)}`);
    }
    // Sent as given but for `$schema`, dropped as from Zod's (the validator above still
    // follows its dialect): a strict tool with a raw schema must already be strict-ready.
    const { $schema: _dialect, ...parameters } = raw;
    const compiled: CompiledToolSchema = { parameters: '$schema' in raw ? parameters : raw, schemaSource: 'json', stripNulls: undefined, validateJson };
    jsonSchemaMemo.set(raw, compiled);
    return compiled;
  }
  const schema = options.schema as z.ZodType;
  const memo = strict ? zodSchemaMemo.strict : zodSchemaMemo.plain;
  const cached = memo.get(schema);
  if (cached !== undefined) return cached;
  const generated = zodToJsonSchema({ toolName: name, schema });
  let compiled: CompiledToolSchema = { parameters: generated, schemaSource: 'zod', stripNulls: undefined, validateJson: undefined };
  if (strict) {
    try {
      const strictSchema = toStrictJsonSchema(generated);
      compiled = {
        ...compiled,
        parameters: strictSchema.schema,
        stripNulls: strictSchema.hasOptionalNulls ? strictSchema.stripOptionalNulls : undefined,
      };
    } catch (error) {
      if (error instanceof StrictSchemaError) throw new ToolDefinitionError(name, `strict mode: ${error.message}`);
      throw error;
    }
  }
  memo.set(schema, compiled);
  return compiled;
}

export type ArgumentsCheck<TParams> =
  | { readonly ok: true; readonly params: TParams }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/** A tool ready for a turn: its definition plus the schema the model sees and its validator. */
export interface WorkerAgentTool<TParams = unknown> extends WorkerToolOptions<TParams> {
  readonly strict: boolean;
  readonly deferLoading: boolean;
  /** The parameters JSON Schema exactly as it is sent to the provider (a raw schema's `$schema` dropped). */
  readonly parameters: JsonObject;
  /** `zod` when generated from `schema`, `json` when `jsonSchema` was passed through. */
  readonly schemaSource: 'zod' | 'json';
  /** Checks decoded arguments: strict-mode nulls removed, then the schema(s) enforced. */
  checkArguments(value: unknown): ArgumentsCheck<TParams>;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Builds a `WorkerAgentTool`, refusing at definition time what would fail later: a name
 * providers reject, a non-object root schema, a schema strict mode cannot express, or a
 * `parallel` tool that could change anything. The JSON Schema is computed here, once per
 * definition, never per turn.
 */
export function defineWorkerTool<TParams>(options: WorkerToolOptions<TParams>): WorkerAgentTool<TParams> {
  const { name } = options;
  if (!TOOL_NAME.test(name)) {
    throw new ToolDefinitionError(name, 'a tool name must match ^[A-Za-z0-9_-]{1,64}$');
  }
  if (options.namespace !== undefined && !TOOL_NAME.test(options.namespace)) {
    throw new ToolDefinitionError(name, `namespace "${options.namespace}" must match ^[A-Za-z0-9_-]{1,64}$`);
  }
  if (options.executionMode === 'parallel' && (!options.isReadOnly || options.isDestructive)) {
    throw new ToolDefinitionError(name, 'only a read-only, non-destructive tool may run in parallel');
  }
  if (options.schema === undefined && options.jsonSchema === undefined) {
    throw new ToolDefinitionError(name, 'give a Zod `schema` or a raw `jsonSchema`');
  }
  const strict = options.strict ?? false;

  const { parameters, schemaSource, stripNulls, validateJson } = compileToolSchema(options, strict);
  const zodSchema = options.schema;
  const checkArguments = (value: unknown): ArgumentsCheck<TParams> => {
    const decoded = stripNulls === undefined ? value : stripNulls(value);
    // The Zod schema, when there is one, is the validator (the seed's contract); a raw
    // `jsonSchema` alone is enforced with Ajv, constraints intact.
    if (zodSchema === undefined) {
      const outcome = (validateJson as (value: unknown) => ValidationOutcome<JsonObject>)(decoded);
      return outcome.ok ? { ok: true, params: outcome.value as TParams } : { ok: false, issues: outcome.issues };
    }
    const parsed = zodSchema.safeParse(decoded);
    if (parsed.success) return { ok: true, params: parsed.data };
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => ({
        path: issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
        message: issue.message.replace(/^Invalid input: /, ''),
      })),
    };
  };

  return {
    ...options,
    strict,
    deferLoading: options.deferLoading ?? false,
    parameters,
    schemaSource,
    checkArguments,
  };
}
