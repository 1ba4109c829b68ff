// The admin command (docs/api.md, "Tokens and who may call what"). Users are never created through the API; this
// talks to the gateway's own database with the gateway's configuration and store code.
import { Bus, EVENTS } from '@ota/bus';
import { createLogger } from '@ota/logging';
import { connectMongo, ensureIndexes } from '@ota/mongo';
import { loadGatewayConfig } from '../config';
import { MongoAccountStore } from '../adapters/mongo/mongo-account-store';
import { registerGatewayModels } from '../adapters/mongo/models';
import { personalTokenExpiry } from '../auth/tokens';

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
    const store = new MongoAccountStore(registerGatewayModels(mongo));
    await ensureIndexes(mongo);
    const maxDevices = count(options, 'max-devices');
    const maxUploads = count(options, 'max-uploads-per-month');
    if (command === 'create-user') {
      const user = await store.createUser(email, options.get('staff') === true, {
        maxDevices: maxDevices ?? config.DEFAULT_MAX_DEVICES,
        maxUploadsPerMonth: maxUploads ?? config.DEFAULT_MAX_UPLOADS_PER_MONTH,
      });
      const { raw } = await store.createToken({
        kind: 'personal',
        scope: '',
        role: null,
        name: 'created by admin create-user',
        userId: user.id,
        projectId: '',
        deviceUuid: '',
        deviceId: '',
        createdBy: user.id,
        // The first token of a new user, to hand over: it expires as any new personal token does.
        expiresAt: personalTokenExpiry(config.PERSONAL_TOKEN_TTL_DAYS),
        signIn: null,
      });
      process.stdout.write(`${JSON.stringify({ user_id: user.id, email: user.email, is_staff: user.isStaff, token: raw })}\n`);
    } else {
      const user = await store.setPlan(email, { maxDevices, maxUploadsPerMonth: maxUploads });
      const plan = { max_devices: user.plan.maxDevices, max_uploads_per_month: user.plan.maxUploadsPerMonth };
      process.stdout.write(`${JSON.stringify({ user_id: user.id, email: user.email, ...plan })}\n`);
      await tellGateways(config.NATS_URL, user.id, config.PLAN_CACHE_TTL_MS);
    }
  } finally {
    await mongo.close();
  }
}

/**
 * Asks every running gateway to drop the owner's cached plan, so that the change counts from the
 * next device check. The plan is stored either way; without NATS it counts within the cache TTL.
 */
async function tellGateways(natsUrl: string, userId: string, cacheTtlMs: number): Promise<void> {
  const later = `the plan is stored; gateways apply it within PLAN_CACHE_TTL_MS (${cacheTtlMs} ms)`;
  let bus: Bus | undefined;
  try {
    bus = await Bus.connect({ url: natsUrl, name: 'admin', logger: createLogger('admin', 'silent'), failFast: true });
    const answers = await bus.requestAll(EVENTS.planChanged, { userId }, { stallMs: 250, maxWaitMs: 2_000 });
    process.stderr.write(answers.length > 0 ? `gateways that applied the plan at once: ${answers.length}\n` : `no gateway answered; ${later}\n`);
  } catch (error) {
    process.stderr.write(`could not reach NATS at ${natsUrl} (${(error as Error).message}); ${later}\n`);
  } finally {
    await bus?.drain().catch(() => undefined);
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
