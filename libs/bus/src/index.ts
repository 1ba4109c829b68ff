import { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Logger } from '@ota/logging';
import { sharedRead, type Counter, type ServiceMetrics } from '@ota/metrics';

export * from './subjects';
import { OBSOLETE_DURABLES, STREAMS, type EventKind, type StreamSpec } from './subjects';

export interface BusOptions {
  url: string;
  /** Shown in the server's connection list: the service name. */
  name: string;
  logger: Logger;
  /** How long a JetStream publish waits for the server's acknowledgement. */
  publishTimeoutMs?: number;
  /**
   * For short-lived commands: fail at once when NATS cannot be reached, instead of waiting for it
   * as a service does.
   */
  failFast?: boolean;
  /** Where the connection, failed publishes and handlers, and the durable consumers' backlog are counted. */
  metrics?: ServiceMetrics;
}

/** How long a scrape waits for the server's consumer info before it answers without it. */
const CONSUMER_INFO_TIMEOUT_MS = 2_000;

export type EventHandler<T> = (event: T, subject: string) => Promise<void> | void;

/**
 * The NATS connection of one process. Two kinds of delivery:
 * - `publish` / `subscribe`: core NATS, every subscriber of every replica gets each event while
 *   connected. Used for read models, which also resync periodically to cover what they missed.
 * - `publishDurable` / `consumeDurable`: JetStream. The publish resolves only once the server
 *   stored the event; a durable consumer sees every event at least once, across restarts.
 */
export class Bus {
  private readonly subscriptions: Subscription[] = [];
  private readonly consumers: Array<{ stream: string; durableName: string; stop(): void; done: Promise<void> }> = [];
  private readonly reconnectListeners: Array<() => void> = [];
  private closing = false;
  private connected = true;

  private constructor(
    readonly connection: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly options: BusOptions,
  ) {
    this.counters = options.metrics ? this.declareMetrics(options.metrics) : undefined;
  }

  private readonly counters: { publishFailures: Counter<'subject'>; handlerFailures: Counter<'consumer'> } | undefined;

  /**
   * The bus's metrics (docs/operations.md, "Metrics"). A durable consumer's backlog is read from
   * the server when Prometheus scrapes: every replica of a service reports the same shared
   * consumer, so dashboards take the maximum.
   */
  private declareMetrics(metrics: ServiceMetrics) {
    metrics.gauge('ota_nats_connected', '1 while the process is connected to NATS, 0 between a disconnect and the reconnection.', [], (gauge) => {
      gauge.set(this.isConnected() ? 1 : 0);
    });
    // Both backlog gauges come from one consumer-info request per consumer and scrape.
    const readBacklog = sharedRead(async () => {
      for (const { stream, durableName } of this.consumers) {
        const info = await withTimeout(this.jsm.consumers.info(stream, durableName), CONSUMER_INFO_TIMEOUT_MS).catch(() => undefined);
        if (!info) continue;
        pending.set({ stream, consumer: durableName }, info.num_pending);
        ackPending.set({ stream, consumer: durableName }, info.num_ack_pending);
      }
    });
    const pending = metrics.gauge('ota_jetstream_consumer_pending_messages', 'Events stored in the stream that the durable consumer has not been delivered yet.', ['stream', 'consumer'], readBacklog);
    const ackPending = metrics.gauge('ota_jetstream_consumer_ack_pending_messages', 'Events delivered to the durable consumer and not yet acknowledged.', ['stream', 'consumer'], readBacklog);
    return {
      publishFailures: metrics.counter('ota_nats_publish_failures_total', 'Durable publishes JetStream did not acknowledge, by subject.', ['subject']),
      handlerFailures: metrics.counter('ota_nats_handler_failures_total', 'Durable events whose handler failed (they are delivered again), by consumer.', ['consumer']),
    };
  }

  static async connect(options: BusOptions): Promise<Bus> {
    const connection = await connect({
      servers: options.url.split(','),
      name: options.name,
      ...(options.failFast
        ? { maxReconnectAttempts: 0, timeout: 3_000 }
        : // Without waitOnFirstConnect, a NATS that is down at start would fail the process instead of waiting.
          { maxReconnectAttempts: -1, reconnectTimeWait: 1_000, waitOnFirstConnect: true }),
    });
    const bus = new Bus(connection, jetstream(connection), await jetstreamManager(connection), options);
    bus.watchStatus();
    return bus;
  }

  /** Creates or updates the JetStream streams this project uses; safe to call from every process. */
  async ensureStreams(streams: readonly StreamSpec[] = STREAMS): Promise<void> {
    for (const spec of streams) {
      const config = {
        name: spec.name,
        subjects: [...spec.subjects],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_age: spec.maxAgeSeconds * 1_000_000_000,
        // Publishers set a message id; a retried publish within this window is stored once.
        duplicate_window: 120 * 1_000_000_000,
      };
      try {
        await this.jsm.streams.info(spec.name);
        await this.jsm.streams.update(spec.name, config);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await this.jsm.streams.add(config);
      }
    }
    for (const durable of OBSOLETE_DURABLES) {
      await this.jsm.consumers.delete(durable.stream, durable.name).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    }
  }

  publish<T>(kind: EventKind<T>, event: T): void {
    this.connection.publish(kind.subject, wireOf(kind, event));
  }

  /**
   * Asks every subscriber of `subject` (core NATS, each replica of a service) and collects the
   * answers that arrive until none has come for `stallMs`, or `maxWaitMs` passed. An empty list
   * when nobody serves the subject.
   */
  async requestAll<T, R>(kind: EventKind<T>, event: T, timing: { stallMs: number; maxWaitMs: number }): Promise<R[]> {
    const answers: R[] = [];
    try {
      const replies = await this.connection.requestMany(kind.subject, wireOf(kind, event), {
        strategy: 'stall',
        stall: timing.stallMs,
        maxWait: timing.maxWaitMs,
      });
      for await (const reply of replies) answers.push(reply.json<R>());
    } catch (error) {
      // "no responders": no replica subscribes; the answers gathered so far are all there are.
      if (!/no responders|503/i.test((error as Error)?.message ?? '')) throw error;
    }
    return answers;
  }

  /** Stores the event in JetStream; `messageId` makes a retried publish a no-op. */
  async publishDurable<T>(kind: EventKind<T>, event: T, messageId: string): Promise<void> {
    this.counters?.publishFailures.inc({ subject: kind.subject }, 0);
    await this.js
      .publish(kind.subject, wireOf(kind, event), { msgID: messageId, timeout: this.options.publishTimeoutMs ?? 5_000 })
      .catch((error: unknown) => {
        this.counters?.publishFailures.inc({ subject: kind.subject });
        throw error;
      });
  }

  subscribe<T>(kind: EventKind<T>, handler: EventHandler<T>): void {
    this.listen(kind.subject, (message) => handler(kind.message.fromJSON(message.json()), message.subject));
  }

  /** Answers `requestAll` of this kind with what `handler` returns, on every replica. */
  serve<T, R>(kind: EventKind<T>, handler: (event: T) => Promise<R> | R): void {
    this.listen(kind.subject, async (message) => {
      message.respond(JSON.stringify(await handler(kind.message.fromJSON(message.json()))));
    });
  }

  /** A core subscription whose handler failures are logged, never thrown into the NATS client. */
  private listen(subject: string, handle: (message: Msg) => Promise<void> | void): void {
    const subscription = this.connection.subscribe(subject, {
      callback: (error, message) => {
        if (error) {
          this.options.logger.warn({ err: error, subject }, 'subscription error');
          return;
        }
        Promise.resolve()
          .then(() => handle(message))
          .catch((handlerError: unknown) =>
            this.options.logger.error({ err: handlerError, subject: message.subject }, 'event handler failed'),
          );
      },
    });
    this.subscriptions.push(subscription);
  }

  /**
   * Runs `handler` for every event of a durable consumer, one at a time. An event is acknowledged
   * only after its handler resolved; a failed handler gets it again after `retryDelayMs`.
   */
  async consumeDurable<T>(
    stream: string,
    durableName: string,
    kind: EventKind<T>,
    handler: EventHandler<T>,
    retryDelayMs = 2_000,
  ): Promise<void> {
    try {
      await this.jsm.consumers.info(stream, durableName);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.jsm.consumers.add(stream, {
        durable_name: durableName,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: kind.subject,
        ack_wait: 30 * 1_000_000_000,
        max_ack_pending: 1_000,
      });
    }
    // Served at zero from the start, so that a dashboard shows the consumer before its first failure.
    this.counters?.handlerFailures.inc({ consumer: durableName }, 0);
    const consumer = await this.js.consumers.get(stream, durableName);
    const messages = await consumer.consume({ max_messages: 256 });
    const done = (async () => {
      for await (const message of messages) {
        try {
          await handler(kind.message.fromJSON(message.json()), message.subject);
          message.ack();
        } catch (error) {
          this.options.logger.error({ err: error, stream, durableName }, 'durable event handler failed; will retry');
          this.counters?.handlerFailures.inc({ consumer: durableName });
          message.nak(retryDelayMs);
        }
      }
    })();
    this.consumers.push({ stream, durableName, stop: () => messages.stop(), done });
  }

  /** False between a disconnect and the reconnection that follows it. */
  isConnected(): boolean {
    return this.connected && !this.connection.isClosed();
  }

  /**
   * Calls `listener` after each reconnection. Core subscriptions miss whatever was published while
   * the connection was down, so an in-memory view fed by them must resync then.
   */
  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  /** Stops consumers after their current event, flushes what was published, and closes. */
  async drain(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const consumer of this.consumers) consumer.stop();
    await Promise.allSettled(this.consumers.map((consumer) => consumer.done));
    if (!this.connection.isClosed()) await this.connection.drain();
  }

  private watchStatus(): void {
    const { logger } = this.options;
    void (async () => {
      for await (const status of this.connection.status()) {
        if (status.type === 'disconnect' || status.type === 'reconnect') logger.warn({ nats: status.type }, 'nats connection');
        if (status.type === 'disconnect') this.connected = false;
        if (status.type === 'reconnect') this.connected = true;
        if (status.type === 'reconnect') for (const listener of this.reconnectListeners) listener();
      }
    })();
  }
}

function isNotFound(error: unknown): boolean {
  const message = (error as Error)?.message ?? '';
  return /not found/i.test(message);
}

/** An event as it travels: the JSON of its message, keyed by the proto field names. */
function wireOf<T>(kind: EventKind<T>, event: T): string {
  return JSON.stringify(kind.message.toJSON(event));
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
