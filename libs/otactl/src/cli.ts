#!/usr/bin/env node
import { parse, UsageError } from './args';
import { ApiRefusal, apiClient, ok } from './client';
import { artifactsCommand, deploymentsCommand, devicesCommand, groupsCommand, projectsCommand, type CommandContext } from './commands';
import { EXIT } from './exit-codes';
import { imageSummary } from './image';
import { HELP } from './help';
import { createOutput } from './output';
import { DEPLOYMENT_FLAGS, deployAndStart, despiteHolds, holdsOf, MANIFEST_FLAGS, manifestText, readBinary, readCompanion, targetsOf, uploadCompanion, uploadOnce } from './release';
import { follow, WAIT_FLAGS, waitSettings } from './wait';

const VERSION = '0.1.0';

const GLOBAL_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  project: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', default: false },
} as const;

/** Runs one command line; resolves with the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // Global flags may come before or after the command: take them out wherever they are. After the
  // command, --version is the build's version label (release, artifacts upload), not otactl's.
  const globals = new Set(['--url', '--token', '--project']);
  const global: string[] = [];
  const rest: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    const name = arg.split('=')[0]!;
    if (globals.has(name)) {
      global.push(arg);
      if (!arg.includes('=') && index + 1 < argv.length) global.push(argv[(index += 1)]!);
    } else if (['--json', '--help', '-h'].includes(arg) || (arg === '--version' && rest.length === 0)) global.push(arg);
    else rest.push(arg);
  }
  const out = createOutput(global.includes('--json'));
  try {
    const { values } = parse(global, GLOBAL_FLAGS);
    const [command, ...args] = rest;
    if (values.version) {
      process.stdout.write(`otactl ${VERSION}\n`);
      return EXIT.ok;
    }
    if (values.help || command === 'help' || !command) {
      process.stdout.write(HELP);
      return command || values.help ? EXIT.ok : EXIT.other;
    }
    const url = values.url ?? env.OTA_URL;
    const token = values.token ?? env.OTA_TOKEN;
    if (!url || !token) throw new UsageError('set --url and --token, or OTA_URL and OTA_TOKEN');
    const api = apiClient({ url, token });
    let project = values.project ?? env.OTA_PROJECT ?? '';
    const ctx: CommandContext = {
      api,
      out,
      consoleUrl: url.replace(/\/+$/, ''),
      async projectId() {
        if (project) return project;
        const projects = await ok(api.GET('/api/v1/projects/', {}));
        if (projects.length !== 1) throw new UsageError(`name the project with --project or OTA_PROJECT: this token sees ${projects.length} (${projects.map((p) => `${p.name} ${p.id}`).join(', ')})`);
        project = projects[0]!.id;
        return project;
      },
    };
    switch (command) {
      case 'release':
        return await release(ctx, args);
      case 'wait': {
        const { values: flags, positionals } = parse(args, WAIT_FLAGS);
        if (!positionals[0]) throw new UsageError('otactl wait needs a deployment id');
        return await follow(api, out, { projectId: await ctx.projectId(), deploymentId: positionals[0], consoleUrl: ctx.consoleUrl, ...waitSettings(flags) });
      }
      case 'deployments':
        return await deploymentsCommand(ctx, args);
      case 'artifacts':
        return await artifactsCommand(ctx, args);
      case 'devices':
        return await devicesCommand(ctx, args);
      case 'groups':
        return await groupsCommand(ctx, args);
      case 'projects':
        return await projectsCommand(ctx, args);
      default:
        throw new UsageError(`unknown command "${command}"; otactl --help lists them`);
    }
  } catch (error) {
    out.endProgress();
    if (error instanceof UsageError) {
      process.stderr.write(`otactl: ${error.message}\n`);
      return EXIT.other;
    }
    if (error instanceof ApiRefusal) {
      process.stderr.write(`otactl: refused (${error.status}): ${error.message}\n`);
      return error.status >= 400 && error.status < 500 ? EXIT.refused : EXIT.other;
    }
    process.stderr.write(`otactl: ${(error as Error).message}${(error as { cause?: Error }).cause ? ` (${(error as { cause: Error }).cause.message})` : ''}\n`);
    return EXIT.other;
  }
}

async function release(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values } = parse(argv, { ...MANIFEST_FLAGS, ...DEPLOYMENT_FLAGS, ...WAIT_FLAGS, wait: { type: 'boolean', default: false }, elf: { type: 'string' }, sbom: { type: 'string' } });
  // Everything that can be checked here is, before a byte is uploaded.
  const settings = values.wait ? waitSettings(values) : undefined;
  const manifest = manifestText(values);
  const binary = readBinary(values.binary);
  const elf = readCompanion('--elf', values.elf);
  const sbom = readCompanion('--sbom', values.sbom);
  const projectId = await ctx.projectId();
  const targets = await targetsOf(ctx.api, projectId, values);
  const artifact = await uploadOnce(ctx.api, projectId, binary, manifest);
  ctx.out.note(`uploaded build ${artifact.build_number} (${artifact.version_label}), SHA-256 ${artifact.checksum_sha256}; image: ${imageSummary(artifact)}`);
  if (elf) {
    const withElf = await uploadCompanion(ctx.api, projectId, artifact.id, 'elf', elf);
    ctx.out.note(`uploaded its ELF, SHA-256 ${withElf.elf?.sha256}: its core dumps are decoded with it`);
  }
  if (sbom) {
    const withSbom = await uploadCompanion(ctx.api, projectId, artifact.id, 'sbom', sbom);
    ctx.out.note(`uploaded its SBOM (${withSbom.sbom?.format}, ${withSbom.sbom?.components} components), SHA-256 ${withSbom.sbom?.sha256}`);
  }
  const holds = despiteHolds(values) ? [] : await holdsOf(ctx.api, projectId, artifact.id);
  if (holds.length > 0) {
    const heldLink = `${ctx.consoleUrl}/console/projects/${projectId}/deployments/${holds[0]!.deployment_id}`;
    const why = `build ${artifact.build_number} is held: ${holds.map((hold) => hold.detail).join('; ')}; no new deployment of it was made. Resume, pass or cancel that, or pass --despite-holds (an approver's).`;
    ctx.out.result({ result: 'paused', reason: why, artifact, holds, console_url: heldLink }, `${why}\nconsole: ${heldLink}`);
    return EXIT.paused;
  }
  const deployment = await deployAndStart(ctx.api, projectId, artifact.id, values, targets);
  const link = `${ctx.consoleUrl}/console/projects/${projectId}/deployments/${deployment.id}`;
  if (!settings) {
    ctx.out.result({ artifact, deployment, console_url: link }, `released build ${artifact.build_number} as deployment ${deployment.id} (${deployment.state}, ${deployment.rollout_percentage}%)\nconsole: ${link}`);
    return EXIT.ok;
  }
  ctx.out.note(`deployment ${deployment.id} is ${deployment.state} at ${deployment.rollout_percentage}%`);
  return follow(ctx.api, ctx.out, { projectId, deploymentId: deployment.id, consoleUrl: ctx.consoleUrl, ...settings });
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`otactl: ${(error as Error).message}\n`);
      process.exitCode = EXIT.other;
    },
  );
}
