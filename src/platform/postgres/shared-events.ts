import type { Logger } from 'pino';
import type { Sql, SqlHandle } from './postgres.js';

/**
 * Cross-process signals through PostgreSQL LISTEN/NOTIFY: when one Lookout process changes
 * something another process caches (a deleted project, a monitor, the shared price catalog), it
 * publishes a topic and every process — itself included — hears it. A notification sent inside a
 * transaction is delivered at commit, so listeners never re-read state that is not visible yet.
 * Delivery is best effort (a process that reconnects may miss one): caches keep their short
 * expiry as the backstop, and nothing durable depends on a notification.
 */

export const EVENTS_CHANNEL = 'lookout_events';

export type SharedEventHandler = (data: Record<string, unknown>) => void | Promise<void>;

/** Publishes a topic on the handle given (a transaction's: delivered when it commits). */
export async function publishEvent(sql: SqlHandle, topic: string, data: Record<string, unknown> = {}): Promise<void> {
  await sql`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify({ ...data, topic })})`;
}

export class SharedEvents {
  private readonly handlers = new Map<string, SharedEventHandler[]>();
  private subscription: { unlisten(): Promise<void> } | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
  ) {}

  /** Opens the listening connection (postgres.js keeps one per pool and re-listens after a reconnect). */
  async start(): Promise<void> {
    this.subscription = await this.sql.listen(EVENTS_CHANNEL, (payload) => this.dispatch(payload));
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.unlisten().catch(() => {});
  }

  on(topic: string, handler: SharedEventHandler): void {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler);
    this.handlers.set(topic, list);
  }

  private dispatch(payload: string): void {
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(payload) as Record<string, unknown>;
    } catch {
      return;
    }
    for (const handler of this.handlers.get(String(data.topic)) ?? []) {
      Promise.resolve()
        .then(() => handler(data))
        .catch((error) => this.logger.warn({ err: error, topic: data.topic }, 'shared event handler failed'));
    }
  }
}
