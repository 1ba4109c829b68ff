import { spawnSync } from 'node:child_process';
import { testStack } from '@ota/testkit';
import { MongoClient } from 'mongodb';

// The local FerretDB on PostgreSQL, as the stack runs it: it gets a GIN index for every indexed
// field (deploy/ferretdb/gin_mirror.go), so that FerretDB's own pushdown of an equality filter,
// `_jsonb->'f' @> value`, is served by an index instead of a scan of the whole table; and it
// reaches PostgreSQL over the cluster's Unix socket, not loopback TCP (libs/devstack/src/
// postgres.ts, socketUrl), where a large answer could wait about 200 ms for the kernel to reopen a
// closed receive window (docs/performance.md, "FerretDB on PostgreSQL's Unix socket").

const { postgresUrl, mongodbUri } = testStack();
const psql = (sql: string) => {
  const result = spawnSync('psql', [postgresUrl, '-At', '-c', sql], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`psql failed: ${result.stderr}`);
  return result.stdout.trim();
};

const describeLocalFerret = postgresUrl ? describe : describe.skip;
if (!postgresUrl) {
  // Said aloud, never silent: with MONGODB_URI or the SQLite backend there is no PostgreSQL of ours.
  process.stderr.write('local-ferretdb-postgresql: the stack runs no local FerretDB on PostgreSQL (MONGODB_URI or LOCAL_MONGODB_BACKEND=sqlite); not applicable\n');
}

describeLocalFerret('the GIN mirror of FerretDB indexes', () => {
  it('indexes every field of a new MongoDB index and serves FerretDB\'s equality pushdown with it', async () => {
    const client = await MongoClient.connect(mongodbUri);
    const database = `ota_gin_${process.pid}`;
    try {
      const things = client.db(database).collection<{ _id: string; owner: string; name: string }>('things');
      await things.insertMany(Array.from({ length: 200 }, (_, i) => ({ _id: `t${i}`, owner: `o${i % 7}`, name: `n${i}` })));
      await things.createIndex({ owner: 1, name: 1 });

      const table = psql(`select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = '${database}' and c.relname like 'things%' and c.relkind = 'r'`);
      expect(table).toMatch(/^things/);
      const ginFields = async () => {
        for (let attempt = 0; attempt < 100; attempt += 1) {
          const defs = psql(`select indexdef from pg_indexes where schemaname = '${database}' and tablename = '${table}' and indexdef like '%USING gin%'`);
          const fields = [...defs.matchAll(/_jsonb -> '(\w+)'/g)].map((match) => match[1]).sort();
          if (fields.length >= 3) return fields;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return [];
      };
      expect(await ginFields()).toEqual(['_id', 'name', 'owner']);

      // The query FerretDB sends for find({_id}) is planned on the GIN index, not as a sequential scan.
      psql(`analyze "${database}"."${table}"`);
      const plan = psql(`set enable_seqscan = off; explain select _jsonb from "${database}"."${table}" where _jsonb->'_id' @> '"t42"'`);
      expect(plan).toMatch(/Index Scan on things\w*_gin/);
      // And answers through the MongoDB protocol are unchanged.
      expect(await things.findOne({ _id: 't42' })).toEqual({ _id: 't42', owner: 'o0', name: 'n42' });
      expect(await things.countDocuments({ owner: 'o3' })).toBe(29);
    } finally {
      await client.db(database).dropDatabase();
      await client.close();
    }
  });
});

describeLocalFerret("FerretDB's connections to PostgreSQL", () => {
  it('come over the Unix socket', async () => {
    const client = await MongoClient.connect(mongodbUri);
    const database = `ota_socket_${process.pid}`;
    try {
      // A command that FerretDB must take to PostgreSQL, so that it holds a connection now.
      await client.db(database).collection<{ _id: string }>('things').insertOne({ _id: 'one' });
      // psql itself comes over TCP (postgresUrl): its own session is left out. A session over a
      // Unix socket has no client address.
      const origins = psql(
        "select coalesce(host(client_addr), 'unix') from pg_stat_activity where backend_type = 'client backend' and usename = 'ferretdb' and pid <> pg_backend_pid()",
      ).split('\n');
      expect(origins.filter(Boolean).length).toBeGreaterThan(0);
      expect(new Set(origins)).toEqual(new Set(['unix']));
    } finally {
      await client.db(database).dropDatabase();
      await client.close();
    }
  });
});
