// PREVIOUS RELEASE: deleted by the next release (docs/architecture.md, "What the next release
// deletes"). `node dist/write-group-copies.js`, run before a rollback to the release before
// (docs/operations.md, "Upgrades and rollbacks"): writes every device's copy of its groups from
// its memberships, prints how many it wrote, then exits.
import { connectMongo } from '@ota/mongo';
import { registerModels } from './adapters/mongo/models';
import { loadRegistryConfig } from './config';
import { writeGroupCopies } from './previous-release/group-copies';

async function main(): Promise<void> {
  const config = loadRegistryConfig();
  const connection = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE });
  try {
    const { devices, written } = await writeGroupCopies(registerModels(connection));
    process.stdout.write(`${JSON.stringify({ devices, written })}\n`);
  } finally {
    await connection.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`write-group-copies: ${(error as Error).message}\n`);
  process.exit(1);
});
