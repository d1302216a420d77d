import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openTurnStore } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import { createPostgresSchema } from '../support/postgres-schema.js';

/** A fresh store in each dialect: a real SQLite file, and a fresh schema on the real PostgreSQL. */
export const BRAIN_DIALECTS: readonly { readonly dialect: string; readonly open: () => Promise<{ store: TurnStore; remove: () => Promise<void> }> }[] = [
  {
    dialect: 'SQLite',
    open: async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'brain-store-test-'));
      const store = await openTurnStore({ databaseUrl: undefined, dataDir });
      return { store, remove: () => rm(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    dialect: 'PostgreSQL',
    open: async () => {
      const schema = await createPostgresSchema();
      const store = await schema.whileSchemasAreStable(() => openTurnStore({ databaseUrl: schema.url, dataDir: path.join(tmpdir(), 'unused-by-postgres') }));
      return { store, remove: () => schema.drop() };
    },
  },
];
