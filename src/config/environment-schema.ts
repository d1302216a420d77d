import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** A whole number written in decimal digits: `0x46A0`, `1e3`, ` 80` and `80.0` are refused, not read as numbers. */
const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, 'must be a whole number in decimal digits')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const commaList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  );

const optionalUrl = z.url({ protocol: /^https?$/ }).optional();

/**
 * Every setting the process reads from its environment. Each is optional: the defaults run
 * the service on one machine with SQLite under `./data`, the scripted model only, and no
 * web search provider.
 */
export const environmentSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: integer(0, 65535).default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Compact V8's old space on every full garbage collection (see memory/compact-heap.ts); `false` leaves it to V8's heuristics. */
  HEAP_COMPACT_ON_FULL_GC: booleanFlag.default(true),
  /** How often malloc's free memory is checked, and given back once a burst has grown it (see memory/native-heap-trimmer.ts); 0 turns it off. */
  NATIVE_HEAP_TRIM_MS: integer(0, 3_600_000).default(2_000),
  DATA_DIR: z.string().default('./data'),
  /** `postgres://…` to share turns between replicas; SQLite under DATA_DIR otherwise. */
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  /** Names this process in the store, so a restart can tell its own dead turns apart. */
  INSTANCE_ID: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).optional(),

  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: optionalUrl,
  OPENAI_MODEL: z.string().min(1).default('gpt-5.1'),
  MODEL_MAX_RETRIES: integer(0, 10).default(3),
  MODEL_REQUEST_TIMEOUT_MS: integer(1_000, 3_600_000).default(300_000),

  API_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  BODY_LIMIT_BYTES: integer(1_024, 64 * 1024 * 1024).default(1024 * 1024),
  RATE_LIMIT_PER_MINUTE: integer(0, 1_000_000).default(0),
  MAX_CONCURRENT_TURNS: integer(1, 10_000).default(64),
  SSE_PING_MS: integer(10, 15_000).default(15_000),
  SHUTDOWN_GRACE_MS: integer(0, 600_000).default(10_000),
  /** How long a client may take to send a whole request (headers and body); not the answer, which may stream for long. */
  REQUEST_TIMEOUT_MS: integer(1_000, 3_600_000).default(10_000),
  HEADERS_TIMEOUT_MS: integer(1_000, 3_600_000).default(5_000),

  DEFAULT_MAX_ITERATIONS: integer(1, 1_000).default(16),
  MAX_ITERATIONS_LIMIT: integer(1, 1_000).default(64),
  DEFAULT_TURN_TIMEOUT_MS: integer(1_000, 86_400_000).default(600_000),
  MAX_TURN_TIMEOUT_MS: integer(1_000, 86_400_000).default(3_600_000),
  TOOL_TIMEOUT_MS: integer(100, 3_600_000).default(120_000),
  PARALLEL_TOOL_LIMIT: integer(1, 64).default(4),
  /** Turns that may wait in one agent's queue (multitask `enqueue`); one more is `409 agent_busy`. */
  AGENT_QUEUE_LIMIT: integer(0, 1_000).default(8),

  SANDBOX_BWRAP_PATH: z.string().default('bwrap'),
  /** Runs commands with no sandbox at all. Only for machines that are themselves disposable. */
  UNSAFE_COMMANDS_WITHOUT_SANDBOX: booleanFlag.default(false),
  COMMAND_ALLOW_NETWORK: booleanFlag.default(false),
  COMMAND_TIMEOUT_MS: integer(100, 3_600_000).default(60_000),
  COMMAND_MAX_TIMEOUT_MS: integer(100, 3_600_000).default(600_000),
  COMMAND_OUTPUT_LIMIT_BYTES: integer(1_024, 16 * 1024 * 1024).default(64 * 1024),
  /** The host uid/gid a root service runs commands as (default 65534, Debian's nobody/nogroup); never 0. */
  SANDBOX_UID: integer(1, 4_294_967_294).optional(),
  SANDBOX_GID: integer(1, 4_294_967_294).optional(),
  /** Memory of one command's whole process tree (a memory cgroup where one can be made). */
  COMMAND_MEMORY_MAX_BYTES: integer(16 * 1024 * 1024, 1024 ** 4).default(2 * 1024 ** 3),
  /** What one agent's home may hold; write tools check before writing, run_command after each command. */
  AGENT_HOME_MAX_BYTES: integer(1024 * 1024, 1024 ** 5).default(1024 ** 3),
  /** Host folders every command sees read-only at the same path, e.g. where stdio MCP servers that skills use are installed. */
  SANDBOX_READ_ONLY_PATHS: commaList.pipe(z.array(z.string().startsWith('/', 'each entry must be an absolute path'))).default([]),

  /** Host names (or host:port) web_fetch may reach even on private addresses, e.g. an intranet wiki. */
  WEB_FETCH_ALLOW_HOSTS: commaList
    .pipe(z.array(z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'each entry must be a host name or host:port, like wiki.internal or 127.0.0.1:8080')))
    .default([]),
  WEB_FETCH_TIMEOUT_MS: integer(100, 120_000).default(15_000),
  WEB_FETCH_MAX_BYTES: integer(1_024, 64 * 1024 * 1024).default(5 * 1024 * 1024),
  WEB_FETCH_MAX_REDIRECTS: integer(0, 20).default(5),
  WEB_FETCH_OUTPUT_CHARS: integer(1_000, 1_000_000).default(20_000),
  WEB_SEARCH_PROVIDER: z.enum(['searxng', 'brave', 'tavily']).optional(),
  SEARXNG_URL: optionalUrl,
  BRAVE_API_KEY: z.string().min(1).optional(),
  BRAVE_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.search.brave.com'),
  TAVILY_API_KEY: z.string().min(1).optional(),
  TAVILY_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.tavily.com'),

  /** A JSON file describing MCP servers: `{ "servers": { "name": { … } } }`. */
  MCP_CONFIG_FILE: z.string().optional(),
  /** An MCP session (a stdio server's process, an HTTP session) no turn of its agent used for this long is closed. */
  MCP_SESSION_IDLE_MS: integer(1_000, 7 * 86_400_000).default(600_000),
  /** MCP sessions one agent may hold at once, across servers. */
  MCP_MAX_SESSIONS_PER_AGENT: integer(1, 1_000).default(8),
  /** MCP sessions the service may hold at once. */
  MCP_MAX_SESSIONS: integer(1, 100_000).default(256),
  TOOL_SEARCH_MODE: z.enum(['emulated', 'native']).default('emulated'),
  SKILLS_DIR: z.string().optional(),
  /** How long a tool call waits for a person's decision before the wait ends as a denial. */
  APPROVAL_TIMEOUT_MS: integer(100, 30 * 86_400_000).default(86_400_000),
  /** Pages one agent's Brain may keep (a new one past it is `409 brain_full`). */
  BRAIN_PAGES_PER_AGENT: integer(1, 1_000_000).default(10_000),

  /**
   * Tests only, and refused unless NODE_ENV=test: kill -9 this process when it first reaches
   * one of these named points (src/durable/crash-points.ts lists them).
   */
  TEST_CRASH_AT: commaList.optional(),
  NODE_ENV: z.string().optional(),
  /** How often (seconds) each replica looks for durable jobs whose lease ran out (PostgreSQL). */
  DURABLE_SUPERVISE_SECONDS: integer(1, 600).default(10),
  /**
   * Seconds a running durable job may go without its worker renewing the lease (a third of it,
   * while the handler runs) before another worker takes it over. At least 10 (pg-boss's
   * shortest heartbeat); with the supervise pass, a dead replica's jobs move within 30 s.
   */
  DURABLE_LEASE_SECONDS: integer(10, 300).default(15),
  /**
   * Days finished durable work is kept: ended runs and jobs with their events, schedule fires,
   * webhook attempts, finished queue jobs. 0 keeps everything.
   */
  RETENTION_DAYS: integer(0, 3_650).default(30),
  /** Workflow task calls of one agent running at once, across its runs (the contract's 8 / 64). */
  WORKFLOW_TASKS_PER_AGENT: integer(1, 64).default(8),
  WORKFLOW_SCRIPT_CPU_MS: integer(50, 60_000).default(2_000),
  WORKFLOW_SCRIPT_MEMORY_MB: integer(4, 512).default(32),
  /** Seconds a workflow task may go without its replica's heartbeat before another one takes it over. */
  WORKFLOW_TASK_LEASE_SECONDS: integer(2, 3_600).default(60),
  WORKFLOW_SCRIPT_WORKERS: integer(1, 16).default(2),
  /** Workflow task turns this replica runs at once (its share of the durable task queue). */
  WORKFLOW_TASK_SLOTS: integer(1, 256).default(16),
  /** Signs completion webhooks, as Standard Webhooks do: `whsec_<base64>` (decoded), or raw bytes. */
  WEBHOOK_SECRET: z
    .string()
    .refine((value) => !value.startsWith('whsec_') || /^[A-Za-z0-9+/]{16,}={0,2}$/.test(value.slice(6)), 'after whsec_ comes the base64 key (at least 12 bytes)')
    .optional(),

  /** Serves `GET /metrics` without the API token (for a scraper on a private network). */
  METRICS_PUBLIC: booleanFlag.default(false),
  /** Lets the service listen beyond loopback with no API_TOKEN. */
  ALLOW_UNAUTHENTICATED: booleanFlag.default(false),

  // Tracing, by the standard OpenTelemetry variables: off unless an exporter or endpoint is named.
  OTEL_SDK_DISABLED: booleanFlag.default(false),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'console', 'none']).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: z.literal('http/json', 'only http/json is supported by this service').optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.literal('http/json', 'only http/json is supported by this service').optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .regex(/^\s*[^=,\s]+\s*=[^,]*(,\s*[^=,\s]+\s*=[^,]*)*$/, 'must be comma-separated key=value pairs')
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('turn-runtime'),
  /** Message, argument and result content on spans. */
  OTEL_GENAI_CAPTURE_CONTENT: booleanFlag.default(false),
});

export type Environment = z.infer<typeof environmentSchema>;
