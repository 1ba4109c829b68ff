import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpWebhookSender, type ResolveAll } from './http-webhook-sender';

// The sender's address checks with a resolver the test controls (names from /etc/hosts and DNS
// rebinding are what it stands for), and a receiver of its own on 127.0.0.1.

const records: Record<string, string[]> = {
  vm: ['127.0.0.1'],
  'hooks.example.com': ['93.184.216.34'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
  'rebinding.example.com': ['93.184.216.34'],
};
const resolveAll: ResolveAll = (hostname, _options, callback) => {
  const addresses = records[hostname];
  if (!addresses) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
  callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
};

let receiver: Server;
let port: number;
beforeAll(async () => {
  receiver = createServer((_request, response) => response.end('ok'));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => receiver.close(resolve)));

test('at creation, a name that resolves to any non-public address is refused; a public or unknown one is not', async () => {
  const sender = new HttpWebhookSender(false, resolveAll);
  expect(await sender.destinationProblem('https://vm/hook')).toMatch(/WEBHOOK_ALLOW_PRIVATE_DESTINATIONS/);
  expect(await sender.destinationProblem('https://mixed.example.com/hook')).toMatch(/WEBHOOK_ALLOW_PRIVATE_DESTINATIONS/);
  expect(await sender.destinationProblem('https://hooks.example.com/hook')).toBeNull();
  expect(await sender.destinationProblem('https://not-yet.example.com/hook')).toBeNull();
  expect(await new HttpWebhookSender(true, resolveAll).destinationProblem('https://vm/hook')).toBeNull();
});

test('a delivery to a name that now resolves to a private address is refused, and the error names no address', async () => {
  const sender = new HttpWebhookSender(false, resolveAll);
  records['rebinding.example.com'] = ['127.0.0.1'];
  const refused = await sender.post(`http://rebinding.example.com:${port}/`, {}, '{}', 2_000).catch((error: Error) => error);
  expect(refused).toBeInstanceOf(Error);
  expect((refused as Error).message).toMatch(/special-purpose address/);
  expect((refused as Error).message).not.toMatch(/127\.0\.0\.1/);
  const unknown = await sender.post(`http://nowhere.example.com:${port}/`, {}, '{}', 2_000).catch((error: Error) => error);
  expect((unknown as Error).message).toBe("the destination's name does not resolve");
});

test('with private destinations allowed, it delivers, and a refused connection is named without its address', async () => {
  const sender = new HttpWebhookSender(true, resolveAll);
  expect(await sender.post(`http://127.0.0.1:${port}/`, {}, '{}', 2_000)).toBe(200);
  const closed = await sender.post('http://127.0.0.1:1/', {}, '{}', 2_000).catch((error: Error) => error);
  expect((closed as Error).message).toBe('the receiver refused the connection');
});
