import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { compactHeapOnFullGc } from './memory/compact-heap.js';
import { startNativeHeapTrimmer } from './memory/native-heap-trimmer.js';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config-error.js';
import { loadConfig } from './config/load-config.js';
import { createRuntime, type Runtime } from './runtime.js';

/** Reads the configuration and builds the runtime; a wrong setting stops the process with a plain message. */
async function start(): Promise<{ config: Config; runtime: Runtime }> {
  try {
    const config = loadConfig(process.env);
    compactHeapOnFullGc(config.heapCompactOnFullGc);
    const logger = pino({ level: config.logLevel, base: { service: 'turn-runtime' } });
    return { config, runtime: await createRuntime({ config, logger }) };
  } catch (error) {
    // The environment, or a file it names, is the operator's to fix: say what, and exit 78 (EX_CONFIG).
    if (error instanceof ConfigError) {
      process.stderr.write(`turn-runtime cannot start: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

/** The process: start, listen, and on SIGTERM / SIGINT drain running turns and close. */
const { config, runtime } = await start();
const { app } = runtime;
const trimmer = startNativeHeapTrimmer({ everyMs: config.nativeHeapTrimMs, logger: app.log, metrics: runtime.observability.metrics });
// After the grace, cancelled turns unwind within a second and the store closes: 2 s more is
// the hard stop. The image's SHUTDOWN_GRACE_MS (7 s) keeps all of it inside `docker stop`'s 10 s.
closeWithGrace({ delay: config.http.shutdownGraceMs + 2_000, logger: app.log }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error');
  else app.log.info({ signal }, 'closing: draining running turns');
  await app.close();
  trimmer?.stop();
});
await app.listen({ host: config.host, port: config.port });
