import { comparedShares, sharesOf } from './perf-shares';

/** One sample of `perf script -F ip,sym`: its frames from the leaf up, each after its address. */
const sample = (...frames: string[]) => `\n${frames.map((frame, index) => `\t        ${(0x1000 + index).toString(16)} ${frame}`).join('\n')}\n`;

const CHECK_IN = 'JS:*checkIn /work/main/services/registry/dist/adapters/mongo/mongo-registry-store.js:486:18';
const DRIVER = 'JS:*toObject /work/main/node_modules/.pnpm/mongodb@6.20.0/node_modules/mongodb/lib/cmap/wire_protocol/responses.js:149:13';
const GRPC = 'JS:*sendStatus /work/main/node_modules/.pnpm/@grpc+grpc-js@1.14.7/node_modules/@grpc/grpc-js/build/src/server-interceptors.js:721:14';

it('charges a builtin to the nearest JavaScript frame above it, and sorts places by where that code lives', () => {
  const script = [
    sample('Builtins_CopyDataProperties', CHECK_IN, DRIVER),
    sample(CHECK_IN),
    sample('Builtins_LoadIC_Megamorphic', DRIVER, CHECK_IN),
    sample('Builtins_KeyedLoadIC', GRPC),
    sample('JS:*emit node:events:471:28'),
    sample('JS:*Socket._write node:net:969:35'),
    sample('JS:*writeGeneric node:internal/stream_base_commons:151:22'),
    sample('v8::internal::Scavenger::ScavengeObject', 'v8::internal::ScavengerCollector::CollectGarbage'),
    sample('finish_task_switch.isra.0', 'schedule', 'epoll_wait'),
  ].join('');
  const { total, samples } = sharesOf(script);
  expect(total).toBe(9);
  expect(Object.fromEntries(samples)).toEqual({
    'our code: services': 2,
    mongodb: 1,
    '@grpc/grpc-js': 1,
    'node: events': 1,
    'node: net': 1,
    'node: other': 1,
    'the garbage collector': 1,
    'the kernel and native code, under no JavaScript': 1,
  });
});

it('sets two processes side by side in microseconds a check, the largest difference first', () => {
  const ours = [sample(CHECK_IN), sample(CHECK_IN), sample(DRIVER)].join('');
  const floor = [sample(DRIVER), sample(DRIVER)].join('');
  // At 1,000 samples a second, each sample is 1 ms; over 10 checks, 100 µs a check.
  const compared = comparedShares(ours, floor, 10, 1000);
  expect(compared.rows).toEqual([
    { place: 'our code: services', ours: 200, floor: 0, difference: 200 },
    { place: 'mongodb', ours: 100, floor: 200, difference: -100 },
  ]);
  expect([compared.ours, compared.floor, compared.difference]).toEqual([300, 200, 100]);
});
