import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/** The real service on each store: a SQLite file, and a fresh schema on the real PostgreSQL. */
export const BRAIN_RUNTIMES: readonly { readonly dialect: string; readonly start: (env?: Record<string, string>) => Promise<{ runtime: TestRuntime; stop: () => Promise<void> }> }[] = [
  {
    dialect: 'SQLite',
    start: async (env = {}) => {
      const runtime = await startTestRuntime({ env });
      return { runtime, stop: () => runtime.close() };
    },
  },
  {
    dialect: 'PostgreSQL',
    start: async (env = {}) => {
      const schema: PostgresSchema = await createPostgresSchema();
      const runtime = await schema.whileSchemasAreStable(() => startTestRuntime({ env: { ...env, DATABASE_URL: schema.url } }));
      return {
        runtime,
        stop: async () => {
          await runtime.close();
          await schema.drop();
        },
      };
    },
  },
];
