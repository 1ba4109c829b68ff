import { serviceOf, sharesOf, type CpuProfile } from './profile-shares';

const PNPM = 'file:///repo/node_modules/.pnpm';

/** A profile of a tree of frames, and samples of the leaf frames named in `samples` (1 ms each). */
function profileOf(frames: Array<{ id: number; name: string; url: string; parent?: number }>, samples: number[]): CpuProfile {
  return {
    nodes: frames.map((frame) => ({
      id: frame.id,
      callFrame: { functionName: frame.name, url: frame.url },
      children: frames.filter((child) => child.parent === frame.id).map((child) => child.id),
    })),
    samples,
    timeDeltas: samples.map(() => 1000),
  };
}

test('charges Node’s own frames to the library that called them, and leaves idle time out', () => {
  const profile = profileOf(
    [
      { id: 1, name: '(root)', url: '' },
      { id: 2, name: '(idle)', url: '', parent: 1 },
      { id: 3, name: '(garbage collector)', url: '', parent: 1 },
      { id: 4, name: 'main', url: 'file:///repo/services/registry/dist/main.js', parent: 1 },
      { id: 5, name: 'writeCommand', url: `${PNPM}/mongodb@6.20.0/node_modules/mongodb/lib/cmap/connection.js`, parent: 4 },
      { id: 6, name: 'writeBuffer', url: '', parent: 5 },
      { id: 7, name: 'makeUnaryRequest', url: `${PNPM}/@grpc+grpc-js@1.14.7/node_modules/@grpc/grpc-js/build/src/client.js`, parent: 4 },
      { id: 8, name: 'request', url: 'node:internal/http2/core', parent: 1 },
      { id: 9, name: 'processTicksAndRejections', url: 'node:internal/process/task_queues', parent: 1 },
    ],
    [2, 2, 3, 4, 5, 6, 6, 7, 8, 9],
  );
  expect(Object.fromEntries(sharesOf(profile))).toEqual({
    'garbage collection': 1,
    'our code': 1,
    'store driver (mongodb, bson, mongoose)': 3,
    'gRPC (grpc-js, protobuf, HTTP/2)': 2,
    "Node's own code called from no library above": 1,
  });
  expect(serviceOf(profile)).toBe('registry');
});
