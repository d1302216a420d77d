import path from 'node:path';
import type { Config } from './config.js';
import { ConfigError } from './config-error.js';
import { environmentSchema, type Environment } from './environment-schema.js';
import { parseWebhookSecret } from './parse-webhook-secret.js';

/**
 * Settings whose empty value is an error rather than "unset": where the service listens and
 * where it keeps its data. `PORT=` is a broken template far more often than a wish for 8080.
 */
const EMPTY_IS_AN_ERROR: ReadonlySet<string> = new Set(['HOST', 'PORT', 'DATA_DIR']);

/** Reads and validates the environment once. Empty strings count as unset, except for HOST, PORT and DATA_DIR. */
export function loadConfig(environment: Readonly<Record<string, string | undefined>>): Config {
  const empty = Object.keys(environment).filter((name) => environment[name] === '' && EMPTY_IS_AN_ERROR.has(name));
  const present = Object.fromEntries(Object.entries(environment).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success || empty.length > 0) {
    const problems = empty.map((name) => `${name}: is set but empty; unset it to use the default, or give a value`);
    for (const issue of parsed.error?.issues ?? []) problems.push(`${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(problems);
  }
  const env = parsed.data;
  const problems: string[] = [];
  if (env.MAX_ITERATIONS_LIMIT < env.DEFAULT_MAX_ITERATIONS) {
    problems.push('MAX_ITERATIONS_LIMIT: must be at least DEFAULT_MAX_ITERATIONS');
  }
  if (env.MAX_TURN_TIMEOUT_MS < env.DEFAULT_TURN_TIMEOUT_MS) {
    problems.push('MAX_TURN_TIMEOUT_MS: must be at least DEFAULT_TURN_TIMEOUT_MS');
  }
  if (env.REQUEST_TIMEOUT_MS < env.HEADERS_TIMEOUT_MS) {
    problems.push('REQUEST_TIMEOUT_MS: must be at least HEADERS_TIMEOUT_MS');
  }
  if (env.COMMAND_MAX_TIMEOUT_MS < env.COMMAND_TIMEOUT_MS) {
    problems.push('COMMAND_MAX_TIMEOUT_MS: must be at least COMMAND_TIMEOUT_MS');
  }
  if (env.TEST_CRASH_AT !== undefined && env.TEST_CRASH_AT.length > 0 && env.NODE_ENV !== 'test') {
    problems.push('TEST_CRASH_AT: kills the service on purpose, for crash tests; it is refused unless NODE_ENV=test');
  }
  const search = searchSettings(env, problems);
  const dataDir = path.resolve(env.DATA_DIR);
  const readOnlyPaths = env.SANDBOX_READ_ONLY_PATHS.map((entry) => path.resolve(entry));
  for (const entry of readOnlyPaths) {
    // The data folder holds every agent's home and the turn store: no agent may read it.
    const overlaps = dataDir === entry || dataDir.startsWith(`${entry === '/' ? '' : entry}/`) || entry.startsWith(`${dataDir}/`);
    if (overlaps) problems.push(`SANDBOX_READ_ONLY_PATHS: ${entry} overlaps DATA_DIR (${dataDir}), which holds every agent's home and the turn store`);
  }
  if (env.API_TOKEN === undefined && !env.ALLOW_UNAUTHENTICATED && !isLoopbackHost(env.HOST)) {
    problems.push(`HOST: ${env.HOST} listens beyond this machine, and API_TOKEN is not set; set API_TOKEN, or ALLOW_UNAUTHENTICATED=true to serve without one`);
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    host: env.HOST,
    port: env.PORT,
    logLevel: env.LOG_LEVEL,
    heapCompactOnFullGc: env.HEAP_COMPACT_ON_FULL_GC,
    nativeHeapTrimMs: env.NATIVE_HEAP_TRIM_MS,
    dataDir,
    databaseUrl: env.DATABASE_URL,
    instanceId: env.INSTANCE_ID,
    model: {
      apiKey: env.OPENAI_API_KEY,
      baseUrl: env.OPENAI_BASE_URL,
      defaultModel: env.OPENAI_MODEL,
      maxRetries: env.MODEL_MAX_RETRIES,
      requestTimeoutMs: env.MODEL_REQUEST_TIMEOUT_MS,
    },
    http: {
      apiToken: env.API_TOKEN,
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
      maxConcurrentTurns: env.MAX_CONCURRENT_TURNS,
      ssePingMs: env.SSE_PING_MS,
      shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
      requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
    },
    limits: {
      defaultMaxIterations: env.DEFAULT_MAX_ITERATIONS,
      maxIterations: env.MAX_ITERATIONS_LIMIT,
      defaultTimeoutMs: env.DEFAULT_TURN_TIMEOUT_MS,
      maxTimeoutMs: env.MAX_TURN_TIMEOUT_MS,
      toolTimeoutMs: env.TOOL_TIMEOUT_MS,
      parallelToolLimit: env.PARALLEL_TOOL_LIMIT,
      agentQueueLimit: env.AGENT_QUEUE_LIMIT,
    },
    sandbox: {
      bwrapPath: env.SANDBOX_BWRAP_PATH,
      unsafeWithoutSandbox: env.UNSAFE_COMMANDS_WITHOUT_SANDBOX,
      allowNetwork: env.COMMAND_ALLOW_NETWORK,
      defaultTimeoutMs: env.COMMAND_TIMEOUT_MS,
      maxTimeoutMs: env.COMMAND_MAX_TIMEOUT_MS,
      outputLimitBytes: env.COMMAND_OUTPUT_LIMIT_BYTES,
      readOnlyPaths,
      uid: env.SANDBOX_UID,
      gid: env.SANDBOX_GID,
      memoryMaxBytes: env.COMMAND_MEMORY_MAX_BYTES,
      homeMaxBytes: env.AGENT_HOME_MAX_BYTES,
    },
    web: {
      allowHosts: env.WEB_FETCH_ALLOW_HOSTS.map((host) => host.toLowerCase()),
      fetchTimeoutMs: env.WEB_FETCH_TIMEOUT_MS,
      fetchMaxBytes: env.WEB_FETCH_MAX_BYTES,
      maxRedirects: env.WEB_FETCH_MAX_REDIRECTS,
      outputChars: env.WEB_FETCH_OUTPUT_CHARS,
      search,
    },
    mcpConfigFile: env.MCP_CONFIG_FILE,
    mcpSessions: { idleCloseMs: env.MCP_SESSION_IDLE_MS, maxPerAgent: env.MCP_MAX_SESSIONS_PER_AGENT, maxTotal: env.MCP_MAX_SESSIONS },
    toolSearchMode: env.TOOL_SEARCH_MODE,
    skillsDir: env.SKILLS_DIR === undefined ? undefined : path.resolve(env.SKILLS_DIR),
    approvals: { timeoutMs: env.APPROVAL_TIMEOUT_MS },
    brain: { pagesPerAgent: env.BRAIN_PAGES_PER_AGENT },
    durable: {
      superviseSeconds: env.DURABLE_SUPERVISE_SECONDS,
      leaseSeconds: env.DURABLE_LEASE_SECONDS,
      retentionDays: env.RETENTION_DAYS,
      testCrashAt: env.TEST_CRASH_AT ?? [],
    },
    workflows: {
      runningTasksPerAgent: env.WORKFLOW_TASKS_PER_AGENT,
      scriptCpuMs: env.WORKFLOW_SCRIPT_CPU_MS,
      scriptMemoryBytes: env.WORKFLOW_SCRIPT_MEMORY_MB * 1024 * 1024,
      taskLeaseSeconds: env.WORKFLOW_TASK_LEASE_SECONDS,
      scriptWorkers: env.WORKFLOW_SCRIPT_WORKERS,
      taskSlots: env.WORKFLOW_TASK_SLOTS,
    },
    webhooks: {
      secret: env.WEBHOOK_SECRET === undefined ? undefined : parseWebhookSecret(env.WEBHOOK_SECRET),
    },
    observability: { metricsPublic: env.METRICS_PUBLIC, tracing: tracingSettings(env), captureContent: env.OTEL_GENAI_CAPTURE_CONTENT },
  };
}

/** OTLP header values are percent-encoded; one that is not valid encoding is taken as written. */
function decodeHeaderPart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Tracing is on when an exporter or an OTLP endpoint is named, and not disabled. */
function tracingSettings(env: Environment): Config['observability']['tracing'] {
  if (env.OTEL_SDK_DISABLED || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const endpointNamed = env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined;
  if (env.OTEL_TRACES_EXPORTER === undefined && !endpointNamed) return undefined;
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '');
  const headers = Object.fromEntries(
    (env.OTEL_EXPORTER_OTLP_HEADERS ?? '')
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => {
        const at = pair.indexOf('=');
        return [decodeHeaderPart(pair.slice(0, at).trim()), decodeHeaderPart(pair.slice(at + 1).trim())];
      }),
  );
  return {
    exporter: env.OTEL_TRACES_EXPORTER ?? 'otlp',
    url: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base}/v1/traces`,
    headers,
    serviceName: env.OTEL_SERVICE_NAME,
  };
}

function searchSettings(env: Environment, problems: string[]): Config['web']['search'] {
  switch (env.WEB_SEARCH_PROVIDER) {
    case undefined:
      return undefined;
    case 'searxng':
      if (env.SEARXNG_URL === undefined) problems.push('SEARXNG_URL: required when WEB_SEARCH_PROVIDER=searxng');
      return { provider: 'searxng', baseUrl: env.SEARXNG_URL ?? '' };
    case 'brave':
      if (env.BRAVE_API_KEY === undefined) problems.push('BRAVE_API_KEY: required when WEB_SEARCH_PROVIDER=brave');
      return { provider: 'brave', baseUrl: env.BRAVE_BASE_URL, apiKey: env.BRAVE_API_KEY ?? '' };
    case 'tavily':
      if (env.TAVILY_API_KEY === undefined) problems.push('TAVILY_API_KEY: required when WEB_SEARCH_PROVIDER=tavily');
      return { provider: 'tavily', baseUrl: env.TAVILY_BASE_URL, apiKey: env.TAVILY_API_KEY ?? '' };
  }
}
