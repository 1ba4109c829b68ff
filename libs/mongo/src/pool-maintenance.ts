import type { MongoClient } from 'mongodb';

/**
 * How often each of the driver's connection pools looks for connections to open or to close, ms.
 *
 * The driver looks every 100 ms (its `minPoolSizeCheckFrequencyMS`, which a client is not let
 * set), whatever the pool's settings. Ours keep no minimum (`minPoolSize` 0) and close no
 * connection for idleness (`maxIdleTimeMS` 0), so each look finds nothing to open, and a
 * connection closed under the pool is dropped by the next check-out that meets it. The ten
 * wake-ups a second cost an idle process about 3 ms of CPU a second on a two-core machine
 * (docs/performance.md, "The driver's pools woken ten times a second"); every 10 s the pools
 * still drop what a cleared pool left behind. A pool given a minimum (`minPoolSize` in
 * MONGODB_URI) keeps the driver's interval, at which it opens its connections one by one.
 */
export const POOL_MAINTENANCE_INTERVAL_MS = 10_000;

/** What this module reads of the driver's insides: its servers by address, and each one's pool. */
interface DriverInsides {
  topology?: { s?: { servers?: Map<string, { pool?: { options?: PoolOptions } }> } };
}
interface PoolOptions {
  readonly minPoolSize?: number;
  readonly minPoolSizeCheckFrequencyMS?: number;
}

/**
 * Makes every pool of `client` that keeps no minimum look every POOL_MAINTENANCE_INTERVAL_MS: the
 * pools open now, and each pool made ready later (a server found, a pool cleared and readied
 * again, the client reopened). A pool turns to its new interval from its next look. Driver versions that keep their
 * pools elsewhere are left as they are; libs/mongo/test/pool-maintenance.int.test.ts fails then.
 */
export function quietPoolMaintenance(client: MongoClient): void {
  const slow = (address: string) => {
    const pool = (client as unknown as DriverInsides).topology?.s?.servers?.get(address)?.pool;
    if (pool?.options === undefined || (pool.options.minPoolSize ?? 0) > 0 || pool.options.minPoolSizeCheckFrequencyMS === POOL_MAINTENANCE_INTERVAL_MS) return;
    // The driver freezes a pool's options; the pool reads them afresh at each look.
    pool.options = Object.freeze({ ...pool.options, minPoolSizeCheckFrequencyMS: POOL_MAINTENANCE_INTERVAL_MS });
  };
  // A pool reports itself ready just before its first look, which then reads the new interval.
  client.on('connectionPoolReady', (event) => slow(event.address));
  for (const address of (client as unknown as DriverInsides).topology?.s?.servers?.keys() ?? []) slow(address);
}
