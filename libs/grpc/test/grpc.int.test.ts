import { isDomainError, notFound, unavailable, type DomainError } from '@ota/errors';
import { createLogger, type Logger } from '@ota/logging';
import { ServiceMetrics } from '@ota/metrics';
import { artifacts as pb } from '@ota/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GrpcServer, RpcError, createServiceClient, type CallContext, type Handlers, type ServiceClient } from '../src';

// libs/grpc against a real grpc-js server of its own on loopback, speaking one of our services'
// definitions (artifacts: unary, client-streaming and server-streaming methods) with handlers the
// test writes: the request id and trace context across the hop, the error map both ways,
// deadlines and cancellation reaching the handler, streaming with flow control, and the metrics.

const SERVICE = 'ota.artifacts.v1.ArtifactsService';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const artifact = (id: string) => pb.Artifact.fromPartial({ id, projectId: 'p1', buildNumber: 7 });

/** What the handlers saw, for the assertions. */
const seen: { contexts: CallContext[]; cancelledAfterDeadline?: boolean; uploadedBytes?: number } = { contexts: [] };
const notUsed = async (): Promise<never> => {
  throw new Error('not used by this test');
};

const handlers: Handlers<typeof pb.ArtifactsServiceService> = {
  async getArtifact(request, ctx) {
    seen.contexts.push(ctx);
    if (request.artifactId === 'missing') throw notFound('artifact not found');
    if (request.artifactId === 'busy') throw unavailable('try later', 3);
    if (request.artifactId === 'bug') throw new Error('a secret detail that must not leave the server');
    if (request.artifactId === 'late') {
      // Answers, but only after the caller's deadline.
      await sleep(300);
      return { artifact: artifact('late') };
    }
    if (request.artifactId === 'slow') {
      // Runs past the caller's deadline; the handler learns the caller has gone.
      while (!ctx.cancelled()) await sleep(10);
      seen.cancelledAfterDeadline = true;
      throw unavailable('gave up');
    }
    return { artifact: artifact(request.artifactId) };
  },
  async uploadArtifact(requests) {
    let bytes = 0;
    for await (const request of requests) if (request.part?.$case === 'chunk') bytes += request.part.chunk.length;
    seen.uploadedBytes = bytes;
    return { artifact: artifact('uploaded') };
  },
  async *readArtifactBinary(request) {
    // 64 chunks of 64 KiB: more than the transport buffers, so the server waits for the reader.
    for (let index = 0; index < 64; index += 1) yield { chunk: Buffer.alloc(65_536, index), offset: request.offset + index * 65_536 };
  },
  listArtifacts: notUsed,
  setArtifactArchived: notUsed,
  createSigningKey: notUsed,
  listSigningKeys: notUsed,
  deleteSigningKey: notUsed,
  requestPatch: notUsed,
  listPatches: notUsed,
  patchForOffer: notUsed,
  putArtifactElf: notUsed,
  putArtifactSbom: notUsed,
  getArtifactSbom: notUsed,
  findSbomComponents: notUsed,
  recordVulnerability: notUsed,
  listVulnerabilities: notUsed,
  getVulnerability: notUsed,
  setVexStatement: notUsed,
  receiveCoreDump: notUsed,
  listCrashGroups: notUsed,
  getCrashGroup: notUsed,
} as Handlers<typeof pb.ArtifactsServiceService>;

const serverMetrics = new ServiceMetrics('artifacts');
const clientMetrics = new ServiceMetrics('gateway');
let server: GrpcServer;
let client: ServiceClient<typeof pb.ArtifactsServiceService>;

/** The server's warnings, with the bindings of the call's logger. */
const warned: Array<{ bindings: Record<string, unknown>; fields: Record<string, unknown>; message: string }> = [];
function warningsKept(logger: Logger): Logger {
  const makeChild = logger.child.bind(logger);
  logger.child = ((bindings: Record<string, unknown>) => {
    const child = makeChild(bindings);
    child.warn = ((fields: Record<string, unknown>, message: string) => void warned.push({ bindings, fields, message })) as Logger['warn'];
    return child;
  }) as Logger['child'];
  return logger;
}

beforeAll(async () => {
  server = new GrpcServer({ logger: warningsKept(createLogger('artifacts', 'silent')), metrics: serverMetrics });
  server.addService(SERVICE, pb.ArtifactsServiceService, handlers);
  const port = await server.listen('127.0.0.1:0');
  client = createServiceClient(SERVICE, pb.ArtifactsServiceService, `127.0.0.1:${port}`, { defaultTimeoutMs: 2_000, streamTimeoutMs: 10_000, metrics: clientMetrics });
  await client.waitForReady(5_000);
});
afterAll(async () => {
  client.close();
  await server.shutdown(1_000);
});

it('answers a unary call, carrying the request id and the trace context to the handler', async () => {
  const { artifact: answered } = await client.getArtifact({ projectId: 'p1', artifactId: 'a1' }, { requestId: 'request-7', traceparent: TRACEPARENT });
  expect(answered).toMatchObject({ id: 'a1', buildNumber: 7 });
  expect(seen.contexts.at(-1)).toMatchObject({ requestId: 'request-7', traceparent: TRACEPARENT });
  // Without a request id the server makes one; a malformed traceparent is dropped.
  await client.getArtifact({ projectId: 'p1', artifactId: 'a2' }, { traceparent: 'not a trace' });
  expect(seen.contexts.at(-1)!.requestId).toMatch(/^[0-9a-f-]{36}$/);
  expect(seen.contexts.at(-1)!.traceparent).toBeUndefined();
});

it('sends a domain error as its status and turns it back into the same domain error', async () => {
  const missing = await client.getArtifact({ projectId: 'p1', artifactId: 'missing' }).catch((error: unknown) => error);
  expect(isDomainError(missing, 'NotFound')).toBe(true);
  expect((missing as DomainError).message).toBe('artifact not found');
  const busy = await client.getArtifact({ projectId: 'p1', artifactId: 'busy' }).catch((error: unknown) => error);
  expect(isDomainError(busy, 'Unavailable')).toBe(true);
});

it('answers anything else as Internal with a generic message, never the error itself', async () => {
  const bug = await client.getArtifact({ projectId: 'p1', artifactId: 'bug' }).catch((error: unknown) => error);
  expect(bug).toBeInstanceOf(RpcError);
  expect((bug as Error).message).toContain('INTERNAL');
  expect((bug as Error).message).not.toContain('secret');
});

it('ends a call at its deadline as Unavailable, and the handler sees the caller has gone', async () => {
  const late = await client.getArtifact({ projectId: 'p1', artifactId: 'slow' }, { timeoutMs: 100 }).catch((error: unknown) => error);
  expect(isDomainError(late, 'Unavailable')).toBe(true);
  for (let waited = 0; seen.cancelledAfterDeadline !== true && waited < 5_000; waited += 10) await sleep(10);
  expect(seen.cancelledAfterDeadline).toBe(true);
});

it('streams to the server and from it, all of it, in order', async () => {
  async function* parts() {
    yield { part: { $case: 'header' as const, header: pb.UploadArtifactHeader.fromPartial({ projectId: 'p1' }) } };
    for (let index = 0; index < 16; index += 1) yield { part: { $case: 'chunk' as const, chunk: Buffer.alloc(100_000, index) } };
  }
  const uploaded = await client.uploadArtifact(parts());
  expect(uploaded.artifact?.id).toBe('uploaded');
  expect(seen.uploadedBytes).toBe(1_600_000);

  const offsets: number[] = [];
  let bytes = 0;
  for await (const message of client.readArtifactBinary({ artifactId: 'a1', offset: 10, length: 0 })) {
    offsets.push(message.offset);
    bytes += message.chunk.length;
    expect(message.chunk[0]).toBe(offsets.length - 1);
  }
  expect(bytes).toBe(64 * 65_536);
  expect(offsets).toEqual(Array.from({ length: 64 }, (_, index) => 10 + index * 65_536));
});

it('stops a server stream when the reader stops reading', async () => {
  let read = 0;
  for await (const _message of client.readArtifactBinary({ artifactId: 'a1', offset: 0, length: 0 })) {
    read += 1;
    if (read === 2) break;
  }
  expect(read).toBe(2);
  // The connection stays usable after the cancelled stream.
  expect((await client.getArtifact({ projectId: 'p1', artifactId: 'a3' })).artifact?.id).toBe('a3');
});

it('counts each call on both sides, by method and code as Go spells it', async () => {
  const server = await serverMetrics.registry.metrics();
  const client = await clientMetrics.registry.metrics();
  expect(server).toMatch(/grpc_server_handled_total\{grpc_type="unary",grpc_service="ota\.artifacts\.v1\.ArtifactsService",grpc_method="getArtifact",grpc_code="NotFound",ota_component="artifacts"\} 1/);
  expect(server).toMatch(/grpc_server_handled_total\{grpc_type="client_stream",[^}]*grpc_method="uploadArtifact",grpc_code="OK"[^}]*\} 1/);
  expect(client).toMatch(/grpc_client_handled_total\{[^}]*grpc_method="getArtifact",grpc_code="Internal"[^}]*\} 1/);
  expect(client).toMatch(/grpc_client_handled_total\{[^}]*grpc_method="getArtifact",grpc_code="DeadlineExceeded"[^}]*\} 1/);
  expect(client).toMatch(/grpc_client_handling_seconds_count\{[^}]*grpc_method="readArtifactBinary"[^}]*\} 1/);
});

// Last: it adds a deadline passed to the counts the test above reads.
it('says which call answered after its caller gave up, and how long it took', async () => {
  const late = await client.getArtifact({ projectId: 'p1', artifactId: 'late' }, { requestId: 'request-late', timeoutMs: 100 }).catch((error: unknown) => error);
  expect(isDomainError(late, 'Unavailable')).toBe(true);
  const lateAnswer = () => warned.find((entry) => entry.message === 'rpc finished after its caller gave up' && entry.bindings.requestId === 'request-late');
  for (let waited = 0; !lateAnswer() && waited < 5_000; waited += 10) await sleep(10);
  expect(lateAnswer()).toEqual({
    bindings: expect.objectContaining({ requestId: 'request-late', rpc: `${SERVICE}/getArtifact` }),
    fields: { code: 'OK', ms: expect.any(Number) },
    message: 'rpc finished after its caller gave up',
  });
  expect(lateAnswer()!.fields.ms).toBeGreaterThanOrEqual(290);
  // A call answered in time says nothing of the kind.
  await client.getArtifact({ projectId: 'p1', artifactId: 'in-time' }, { requestId: 'request-in-time' });
  expect(warned.filter((entry) => entry.bindings.requestId === 'request-in-time')).toEqual([]);
});
