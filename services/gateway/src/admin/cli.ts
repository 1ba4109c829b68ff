// The admin command (decisions.md section 1). Users are never created through the API; this
// talks to the gateway's own database with the gateway's configuration and store code.
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { loadGatewayConfig } from '../config';
import { GatewayStore } from '../stores/gateway-store';
import { registerGatewayModels } from '../stores/models';

const USAGE = `usage:
  admin create-user --email E [--staff] [--max-devices N] [--max-uploads-per-month N]
  admin set-plan --email E [--max-devices N] [--max-uploads-per-month N]`;

function parseArgs(argv: string[]): { command: string; options: Map<string, string | true> } {
  const [command = '', ...rest] = argv;
  const options = new Map<string, string | true>();
  for (let i = 0; i < rest.length; i += 1) {
    const flag = rest[i]!;
    if (!flag.startsWith('--')) throw new Error(`unexpected argument "${flag}"`);
    const next = rest[i + 1];
    if (flag === '--staff') options.set('staff', true);
    else if (next === undefined || next.startsWith('--')) throw new Error(`${flag} needs a value`);
    else {
      options.set(flag.slice(2), next);
      i += 1;
    }
  }
  return { command, options };
}

function count(options: Map<string, string | true>, name: string): number | undefined {
  const value = options.get(name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new Error(`--${name} takes a whole number`);
  return Number(value);
}

async function main(): Promise<void> {
  const { command, options } = parseArgs(process.argv.slice(2));
  const email = options.get('email');
  if (!['create-user', 'set-plan'].includes(command) || typeof email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(email)) {
    throw new Error(USAGE);
  }
  const config = loadGatewayConfig();
  const mongo = await connectMongo({ uri: config.MONGODB_URI, database: config.MONGODB_DATABASE, maxPoolSize: 2 });
  try {
    const store = new GatewayStore(registerGatewayModels(mongo));
    await ensureIndexes(mongo);
    const maxDevices = count(options, 'max-devices');
    const maxUploads = count(options, 'max-uploads-per-month');
    if (command === 'create-user') {
      const user = await store.createUser(email, options.get('staff') === true, {
        max_devices: maxDevices ?? config.DEFAULT_MAX_DEVICES,
        max_uploads_per_month: maxUploads ?? config.DEFAULT_MAX_UPLOADS_PER_MONTH,
      });
      const { raw } = await store.createToken({
        kind: 'personal',
        scope: '',
        name: 'created by admin create-user',
        userId: user._id,
        projectId: '',
        deviceUuid: '',
        deviceId: '',
      });
      process.stdout.write(`${JSON.stringify({ user_id: user._id, email: user.email, is_staff: user.is_staff, token: raw })}\n`);
    } else {
      const user = await store.setPlan(email, { max_devices: maxDevices, max_uploads_per_month: maxUploads });
      process.stdout.write(`${JSON.stringify({ user_id: user._id, email: user.email, ...user.plan })}\n`);
    }
  } finally {
    await mongo.close();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
