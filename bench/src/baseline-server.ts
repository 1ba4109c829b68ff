// S0: the least a device check must do in the store, served by a bare node:http process with the
// MongoDB driver: one token lookup by hash, one device upsert and one decision insert, against the
// same FerretDB as the stack. S1's rate is compared to this one, measured in the same run. Its
// driver's pools look for connections to open or close as our services' do (every 10 s, not 100 ms),
// so that neither side pays for looks the other is spared.
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
// The module alone, without the mongoose the rest of @ota/mongo loads.
import { quietPoolMaintenance } from '@ota/mongo/dist/pool-maintenance';
import { MongoClient } from 'mongodb';

async function main(): Promise<void> {
  const [uri, tokenDatabase, port] = [process.env.MONGODB_URI!, process.env.TOKEN_DATABASE!, Number(process.env.PORT)];
  const client = await MongoClient.connect(uri, { maxPoolSize: 20 });
  quietPoolMaintenance(client);
  const tokens = client.db(tokenDatabase).collection<{ _id: string; project_id?: string }>('tokens');
  const devices = client.db('bench_baseline').collection<{ _id: string }>('devices');
  const decisions = client.db('bench_baseline').collection('decisions');

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
          const raw = (request.headers.authorization ?? '').replace(/^Bearer /, '');
          const token = await tokens.findOne({ _id: createHash('sha256').update(raw).digest('hex') });
          if (!token) {
            response.writeHead(401).end('{"detail":"unauthenticated"}');
            return;
          }
          const deviceId = `${token.project_id}:${String(body.device_id)}`;
          await devices.updateOne({ _id: deviceId }, { $set: { last_seen: new Date(), reported: body } }, { upsert: true });
          await decisions.insertOne({ _id: randomUUID() as never, device_id: deviceId, status: 'no_active_deployment', created_at: new Date() });
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"update_available":false,"status":"no_active_deployment"}');
        } catch (error) {
          response.writeHead(500).end(JSON.stringify({ detail: (error as Error).message }));
        }
      })();
    });
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
  process.once('SIGTERM', () => server.close(() => void client.close().then(() => process.exit(0))));
}

void main();
