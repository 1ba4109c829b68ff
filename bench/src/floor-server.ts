// S17: the floor of our stack under a device check. The least the design's libraries do for one,
// with nothing of ours: a Koa app (koa-body, @koa/router) reads the token by hash and makes one
// grpc-js unary call, with the check's own messages (ts-proto), to a second process, which
// finds-and-modifies the device and inserts the decision record through the MongoDB driver.
// `node floor-server.js back` serves the gRPC half, `front` the HTTP half; s1's CPU per check is
// compared with the two together, measured in the same run (docs/performance.md). Each driver's
// pools look for connections to open or close as our services' do (every 10 s, not the driver's
// 100 ms): the floor is the least the libraries do, so it is spared what our services are spared.
import { hash, randomUUID } from 'node:crypto';
import { Server, ServerCredentials, credentials, makeGenericClientConstructor, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import Router from '@koa/router';
import { registry as pb } from '@ota/proto';
import Koa from 'koa';
import { koaBody } from 'koa-body';
// The module alone, without the mongoose the rest of @ota/mongo loads.
import { quietPoolMaintenance } from '@ota/mongo/dist/pool-maintenance';
import { MongoClient } from 'mongodb';

/** One unary method, encoded as registry's check is. */
const FLOOR_SERVICE: ServiceDefinition = {
  check: {
    path: '/bench.floor.Floor/Check',
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: pb.CheckDeviceRequest) => Buffer.from(pb.CheckDeviceRequest.encode(value).finish()),
    requestDeserialize: (bytes: Buffer) => pb.CheckDeviceRequest.decode(bytes),
    responseSerialize: (value: pb.CheckDeviceResponse) => Buffer.from(pb.CheckDeviceResponse.encode(value).finish()),
    responseDeserialize: (bytes: Buffer) => pb.CheckDeviceResponse.decode(bytes),
  },
};

async function back(mongo: MongoClient, port: number): Promise<() => Promise<void>> {
  const devices = mongo.db('bench_floor').collection<{ _id: string }>('devices');
  const records = mongo.db('bench_floor').collection('records');
  const server = new Server();
  server.addService(FLOOR_SERVICE, {
    check: (call: { request: pb.CheckDeviceRequest }, callback: (error: ServiceError | null, answer?: pb.CheckDeviceResponse) => void) => {
      const request = call.request;
      const id = `${request.projectId}:${request.deviceId}`;
      void (async () => {
        const before = await devices.findOneAndUpdate(
          { _id: id },
          { $set: { last_seen: new Date(), reported: request.reported ?? null, current_build_number: request.currentBuildNumber }, $inc: { check_count: 1 } },
          { upsert: true, returnDocument: 'before' },
        );
        await records.insertOne({ _id: randomUUID() as never, device_id: id, seq: Number((before as { check_count?: number } | null)?.check_count ?? 0) + 1, status: 'no_active_deployment', at: new Date() });
        return pb.CheckDeviceResponse.fromPartial({ status: 'no_active_deployment' });
      })().then(
        (answer) => callback(null, answer),
        (error: Error) => callback(Object.assign(error, { code: 13, details: error.message, metadata: undefined as never })),
      );
    },
  });
  await new Promise<void>((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())));
  return () => new Promise((resolve) => server.tryShutdown(() => resolve()));
}

async function front(mongo: MongoClient, tokenDatabase: string, port: number, backPort: number): Promise<() => Promise<void>> {
  const tokens = mongo.db(tokenDatabase).collection<{ _id: string; project_id?: string; owner_id?: string }>('tokens');
  const Client = makeGenericClientConstructor(FLOOR_SERVICE, 'Floor');
  const client = new Client(`127.0.0.1:${backPort}`, credentials.createInsecure()) as unknown as {
    check: (request: pb.CheckDeviceRequest, options: { deadline: Date }, callback: (error: ServiceError | null, answer: pb.CheckDeviceResponse) => void) => void;
    close: () => void;
  };
  const router = new Router();
  router.post('/check', async (ctx) => {
    const raw = (ctx.get('authorization') ?? '').replace(/^Bearer /, '');
    const token = await tokens.findOne({ _id: hash('sha256', raw, 'hex') });
    if (!token) {
      ctx.status = 401;
      ctx.body = { detail: 'unauthenticated' };
      return;
    }
    const body = ctx.request.body as Record<string, unknown>;
    const request = pb.CheckDeviceRequest.fromPartial({
      projectId: String(token.project_id),
      deviceId: String(body.device_id),
      viaProjectToken: true,
      reported: { framework: String(body.framework ?? ''), chipFamily: String(body.chip_family ?? '') },
      currentBuildNumber: Number(body.current_build_number ?? 0),
    });
    const answer = await new Promise<pb.CheckDeviceResponse>((resolve, reject) =>
      client.check(request, { deadline: new Date(Date.now() + 5_000) }, (error, reply) => (error ? reject(error) : resolve(reply))),
    );
    ctx.body = { update_available: false, status: answer.status };
  });
  const app = new Koa();
  app.use(koaBody({ jsonLimit: '64kb' }));
  app.use(router.routes());
  const server = app.listen(port, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return async () => {
    client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

async function main(): Promise<void> {
  const role = process.argv[2];
  const mongo = await MongoClient.connect(process.env.MONGODB_URI!, { maxPoolSize: 20 });
  quietPoolMaintenance(mongo);
  const stop =
    role === 'back'
      ? await back(mongo, Number(process.env.PORT))
      : await front(mongo, process.env.TOKEN_DATABASE!, Number(process.env.PORT), Number(process.env.BACK_PORT));
  process.stdout.write('listening\n');
  process.once('SIGTERM', () => void stop().then(() => mongo.close()).then(() => process.exit(0)));
}

void main();
