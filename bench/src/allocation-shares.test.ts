import { allocationsOf, type HeapProfileNode } from './allocation-shares';
import { processNameOf } from './allocation-sampler';

const PNPM = 'file:///repo/node_modules/.pnpm';

function frame(id: number, functionName: string, url: string, selfSize: number, children: HeapProfileNode[] = []): HeapProfileNode {
  return { id, callFrame: { functionName, url, lineNumber: 9 }, selfSize, children };
}

test('charges bytes as profile-shares charges time: Node’s own frames to the library that called them', () => {
  const head = frame(1, '(root)', '', 0, [
    frame(2, 'dispatch', `${PNPM}/@koa+router@15.7.0_koa@3.3.0/node_modules/@koa/router/dist/index.js`, 4096, [frame(3, 'push', 'node:internal/array', 1024)]),
    frame(4, 'checkIn', 'file:///repo/services/registry/dist/adapters/mongo/mongo-registry-store.js', 512, [
      frame(5, 'deserializeObject', `${PNPM}/bson@6.10.4/node_modules/bson/lib/bson.cjs`, 2048),
    ]),
    frame(6, 'makeUnaryRequest', `${PNPM}/@grpc+grpc-js@1.14.7/node_modules/@grpc/grpc-js/build/src/client.js`, 256),
  ]);
  const { byCategory, topFunctions } = allocationsOf(head, 2);
  expect(Object.fromEntries(byCategory)).toEqual({
    'HTTP and Koa': 5120,
    'our code': 512,
    'store driver (mongodb, bson, mongoose)': 2048,
    'gRPC (grpc-js, protobuf, HTTP/2)': 256,
  });
  expect(topFunctions).toEqual([
    ['dispatch @koa/router/dist/index.js:10', 4096],
    ['deserializeObject bson/lib/bson.cjs:10', 2048],
  ]);
});

test('names a process by its service, or by its script and arguments', () => {
  expect(processNameOf(['/repo/services/gateway/dist/main.js'])).toBe('gateway');
  expect(processNameOf(['/repo/bench/dist/floor-server.js', 'front'])).toBe('floor-server-front');
});
