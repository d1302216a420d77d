import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { ConfigError, loadConfig } from './config/config.js';
import { createRuntime } from './runtime.js';

/** The process: read the configuration, start the runtime, listen, and close gracefully on signals. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`turn-runtime cannot start: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, base: { service: 'turn-runtime' } });
  const { app } = await createRuntime({ config, logger });
  closeWithGrace({ delay: config.http.shutdownGraceMs + 5_000, logger }, async ({ signal, err }) => {
    if (err !== undefined) logger.error({ err }, 'closing after an uncaught error');
    else logger.info({ signal }, 'closing: draining running turns');
    await app.close();
  });
  await app.listen({ host: config.host, port: config.port });
}

await main();
