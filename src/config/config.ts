import type { Environment } from './environment-schema.js';

/** The validated configuration the rest of the service reads; nothing else reads `process.env`. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly logLevel: Environment['LOG_LEVEL'];
  readonly heapCompactOnFullGc: boolean;
  /** 0 when off. */
  readonly nativeHeapTrimMs: number;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly instanceId: string | undefined;
  readonly model: {
    readonly apiKey: string | undefined;
    readonly baseUrl: string | undefined;
    readonly defaultModel: string;
    readonly maxRetries: number;
    readonly requestTimeoutMs: number;
  };
  readonly http: {
    readonly apiToken: string | undefined;
    readonly bodyLimitBytes: number;
    readonly rateLimitPerMinute: number;
    readonly maxConcurrentTurns: number;
    readonly ssePingMs: number;
    readonly shutdownGraceMs: number;
    readonly requestTimeoutMs: number;
    readonly headersTimeoutMs: number;
  };
  readonly limits: {
    readonly defaultMaxIterations: number;
    readonly maxIterations: number;
    readonly defaultTimeoutMs: number;
    readonly maxTimeoutMs: number;
    readonly toolTimeoutMs: number;
    readonly parallelToolLimit: number;
    readonly agentQueueLimit: number;
  };
  readonly sandbox: {
    readonly bwrapPath: string;
    readonly unsafeWithoutSandbox: boolean;
    readonly allowNetwork: boolean;
    readonly defaultTimeoutMs: number;
    readonly maxTimeoutMs: number;
    readonly outputLimitBytes: number;
    /** Host folders bound read-only, at the same path, into every bubblewrap sandbox. */
    readonly readOnlyPaths: readonly string[];
    readonly uid: number | undefined;
    readonly gid: number | undefined;
    readonly memoryMaxBytes: number;
    readonly homeMaxBytes: number;
  };
  readonly web: {
    readonly allowHosts: readonly string[];
    readonly fetchTimeoutMs: number;
    readonly fetchMaxBytes: number;
    readonly maxRedirects: number;
    readonly outputChars: number;
    readonly search:
      | { readonly provider: 'searxng'; readonly baseUrl: string }
      | { readonly provider: 'brave'; readonly baseUrl: string; readonly apiKey: string }
      | { readonly provider: 'tavily'; readonly baseUrl: string; readonly apiKey: string }
      | undefined;
  };
  readonly mcpConfigFile: string | undefined;
  /** MCP sessions are per agent: closed after `idleCloseMs` unused, and bounded per agent and in all. */
  readonly mcpSessions: { readonly idleCloseMs: number; readonly maxPerAgent: number; readonly maxTotal: number };
  readonly toolSearchMode: 'emulated' | 'native';
  readonly skillsDir: string | undefined;
  readonly approvals: { readonly timeoutMs: number };
  /** Pages one agent's Brain may keep; a new page past it is `409 brain_full`. */
  readonly brain: { readonly pagesPerAgent: number };
  readonly durable: {
    readonly superviseSeconds: number;
    /** How long a running job's lease lasts unless its worker renews it. */
    readonly leaseSeconds: number;
    /** Days finished durable work is kept before the periodic prune deletes it; 0 keeps everything. */
    readonly retentionDays: number;
    /** Crash points armed for a crash test (TEST_CRASH_AT); empty in production. */
    readonly testCrashAt: readonly string[];
  };
  readonly workflows: {
    readonly runningTasksPerAgent: number;
    readonly scriptCpuMs: number;
    readonly scriptMemoryBytes: number;
    readonly taskLeaseSeconds: number;
    readonly scriptWorkers: number;
    readonly taskSlots: number;
  };
  readonly webhooks: {
    /** The HMAC key (decoded from `whsec_…`); webhooks are refused without one. */
    readonly secret: Buffer | undefined;
  };
  readonly observability: {
    readonly metricsPublic: boolean;
    /** Where and how spans go; undefined when tracing is off. */
    readonly tracing:
      | {
          readonly exporter: 'otlp' | 'console';
          /** The OTLP/HTTP traces URL (`…/v1/traces`). */
          readonly url: string;
          readonly headers: Readonly<Record<string, string>>;
          readonly serviceName: string;
        }
      | undefined;
    /** Message, argument and result content on spans. */
    readonly captureContent: boolean;
  };
}
