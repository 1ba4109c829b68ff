import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import type { ServiceMetrics } from '@ota/metrics';
import type { BinaryStorage, ByteRange } from '../../domain/ports';

export interface S3Settings {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  partSizeBytes: number;
}

export function createS3Client(settings: S3Settings, metrics?: ServiceMetrics): S3Client {
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.accessKeyId
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
      : {}),
    // Checksums only where the API requires them: with the SDK's default, S3-compatible servers
    // that do not speak the newer checksum framing (s3rver among them) store the framing inside
    // the object.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  if (metrics) countRequests(client, metrics);
  return client;
}

/**
 * Object storage's golden signals (docs/operations.md, "Metrics"): each request's latency (to its
 * answer's headers: a download's body streams after) and its failures by operation, where a 4xx
 * answer (a missing object, a refused key) is the caller's and anything else is the store's.
 */
function countRequests(client: S3Client, metrics: ServiceMetrics): void {
  const duration = metrics.histogram('ota_s3_request_duration_seconds', 'Time from sending an object-storage request to its answer, by operation.', ['operation']);
  const failures = metrics.counter('ota_s3_request_failures_total', 'Object-storage requests that failed, by operation and by whose the failure is (client_error: a 4xx answer; server_error: a 5xx or no answer).', ['operation', 'kind']);
  // An operation's failures are served at zero from its first request: a rate of 0, not missing.
  const seen = new Set<string>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      if (!seen.has(operation)) {
        seen.add(operation);
        for (const kind of ['client_error', 'server_error']) failures.inc({ operation, kind }, 0);
      }
      const startedAt = process.hrtime.bigint();
      try {
        return await next(args);
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
        failures.inc({ operation, kind: status >= 400 && status < 500 ? 'client_error' : 'server_error' });
        throw error;
      } finally {
        duration.observe({ operation }, Number(process.hrtime.bigint() - startedAt) / 1e9);
      }
    },
    { step: 'initialize', name: 'otaRequestMetrics' },
  );
}

export class S3BinaryStorage implements BinaryStorage {
  constructor(
    private readonly client: S3Client,
    private readonly settings: S3Settings,
  ) {}

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch {
      await this.client.send(new CreateBucketCommand({ Bucket: this.settings.bucket }));
    }
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
  }

  async put(key: string, body: Readable): Promise<void> {
    // One part in flight at a time: memory stays near one part size whatever the binary's size.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: key, Body: body, ContentType: 'application/octet-stream' },
      partSize: this.settings.partSizeBytes,
      queueSize: 1,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const response = await this.client.send(
      new GetObjectCommand({ Bucket: this.settings.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
    );
    return response.Body as Readable;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }));
  }
}
