import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  id: string;
  event: string;
  timestamp: number;
  signature: string;
  body: string;
  /** What the receiver answered (0: it held the request and never answered). */
  answered: number;
}

/**
 * A webhook receiver on 127.0.0.1 for the tests: it records every attempt, answers with what
 * `answer` says for the delivery id's n-th attempt (1-based), and checks signatures the way
 * docs/api.md tells receivers to.
 */
export class WebhookReceiver {
  readonly attempts: ReceivedDelivery[] = [];
  private readonly server: Server;
  private readonly held = new Set<() => void>();

  private constructor(private readonly answer: (deliveryId: string, attempt: number) => number | 'hold') {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const delivery = deliveryOf(request.headers, Buffer.concat(chunks).toString('utf8'));
        const attempt = this.attempts.filter((earlier) => earlier.id === delivery.id).length + 1;
        const status = this.answer(delivery.id, attempt);
        this.attempts.push({ ...delivery, answered: status === 'hold' ? 0 : status });
        if (status === 'hold') {
          this.held.add(() => response.destroy());
          return;
        }
        response.writeHead(status).end();
      });
    });
  }

  static async start(answer: (deliveryId: string, attempt: number) => number | 'hold' = () => 200): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(answer);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/ota`;
  }

  /** Each delivery the receiver accepted (answered 2xx), once, in the order of first acceptance. */
  accepted(): ReceivedDelivery[] {
    const seen = new Set<string>();
    return this.attempts.filter((attempt) => attempt.answered >= 200 && attempt.answered < 300 && !seen.has(attempt.id) && seen.add(attempt.id));
  }

  /** HMAC-SHA256 of "<timestamp>.<body>" with the secret, compared in constant time. */
  static signatureIsValid(secret: string, delivery: ReceivedDelivery): boolean {
    const expected = Buffer.from(`v1=${createHmac('sha256', secret).update(`${delivery.timestamp}.${delivery.body}`).digest('hex')}`);
    const given = Buffer.from(delivery.signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  async close(): Promise<void> {
    for (const drop of this.held) drop();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function deliveryOf(headers: IncomingHttpHeaders, body: string): Omit<ReceivedDelivery, 'answered'> {
  return {
    id: String(headers['ota-delivery-id'] ?? ''),
    event: String(headers['ota-event'] ?? ''),
    timestamp: Number(headers['ota-timestamp']),
    signature: String(headers['ota-signature'] ?? ''),
    body,
  };
}

