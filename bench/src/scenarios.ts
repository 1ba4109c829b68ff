import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { freePort, serviceArgsOf, startProcess, waitForPort, type RunningStack } from '@ota/devstack';
import { DEVICE_PAGE_LEVELS } from '@ota/ids';
import { startBaseline, startBenchStack, startFloor, stackPids } from './bench-stack';
import { CHIP, createDeployment, createDraftDeployment, createFleet, FRAMEWORK, Gateway, inParallel, randomBuild, startDeployment, type Fleet } from './fleet';
import { quantile, summarize } from './latency';
import { runOpenLoop, type Outcome } from './open-loop';
import { idleCpuOf, perRequest, usageOf, usageOfInBackground } from './process-usage';
import { heapOf, type HeapReading } from './service-heap';
import { highestRate, measureStep, P99_TARGET_MS, ratioBounds, type RateSearchResult, type Step } from './rate-search';
import { measureDriverCost } from './driver-cost';
import { measureHistoryCost } from './history-cost';
import { seedDeploymentEvents } from './seed-deployment';
import { OUR_SERVICES, STORE_PROCESSES, statementCounter } from './store-statements';
import { SEEDED_BUILDS, SEEDED_CHIP_FAMILIES, seedDevicePlaces, seedFleet, seedStatuses, seededDeviceId, settleStore, storeWrites, writesBetween } from './seed-fleet';

export const SCENARIOS = {
  s0: 'baseline: a bare node:http process doing a check\'s minimum store work (token lookup, device upsert, decision insert)',
  s1: 'check of known devices (no deployment), compared with s0 in the same run',
  s2: 'check with auto-registration: every device is new',
  s3: 'check with offers: active deployments at 50%, with board and channel filters',
  s4: 'status ingestion, with every accepted event checked against the stored states',
  s5: 'mixed: 90% checks with offers, 10% status events',
  s6: 'wake storm: 10 times the steady check rate for a while, then back',
  s9: 'propagation: a deployment paused under load; how long until no check offers it',
  s10: 'deployment preview over the known fleet (--devices): how long it takes, against its deadline (PREVIEW_TIMEOUT_MS)',
  s11: 'deployment summary of deployments of each --summary-devices size whose devices all reported (seeded in the store): latency and CPU per call, alone and under a check load',
  s12: 'downloads: --download-devices devices fetching a 1.5 MB build at once, from the gateway and from presigned object-storage URLs: aggregate rate and CPU per MiB',
  s13: 'store operations: the MongoDB driver\'s CPU per primary-key read (findOne, and a find command), per one-document update and find-and-modify, and per bucket read (through the cursor, in one batch, and as one find command), in the process that makes them, with and without command monitoring',
  s14: 'the store\'s CPU for a check\'s device and decision-record writes in each layout registry has used (history slots as objects, as strings, none; records of their own, inserted or in a ring with and without an index by device, and split: without registry\'s device indexes, on a device of only the check\'s fields, without the records\' index) and s0\'s',
  s15: 'delta patches: a patch between two 1.5 MB images (the second with a stretch inserted a third of the way in, moving what follows, and a byte changed every 4 KiB) asked for through the API and made by the artifacts service\'s worker with detools: seconds until ready, the patch\'s size, and the CPU seconds and peak memory of the artifacts service with detools under it',
  s16: 'a large fleet: --fleet-devices devices (a million by default) seeded into one project over chip families, builds, channels and groups, with the seeding time and the store\'s size on disk; then, through the API, creating and starting a deployment to the whole fleet, and each of what a team does around it up to 20 times (device pages: unfiltered, by chip family, group and channel, a text search, a later page by device_id and by id, and one after a device in the last eighth of its bucket, which reads the next bucket too; a device by its device_id; a device\'s detail; a group\'s reach; the chip families; the groups and channels with their counts; the summary; the audit list): median, 95th percentile and each process\'s CPU per call; then a deployment\'s worth of per-device statuses seeded and its states pages read (unfiltered, at one status, a later page), checks of seeded devices, the fleet-wide deployment\'s preview in 256 parts (first part, whole) and as one request, and a bulk change adding a seeded group\'s tenth of the fleet to a new group and one removing them, each from request to end with its progress, CPU and audit events; then a change of 1,000 devices by their ids (its impact on rollouts, the add, the removal), each one request with its CPU; each process\'s peak memory over the run, sampled twice a second, against the empty project\'s (once at rest, and its peak while the same operations and preview read a second project that stays empty)',
  s17: 'the floor of our stack under a check: a Koa app reading the token and making one grpc-js unary call (the check\'s ts-proto messages) to a process that finds-and-modifies the device and inserts the decision record through the MongoDB driver; with s1 in the same run, our services\' CPU per check against it',
  s18: "check with offers, as s3, on deployments with everything that decides when a device is offered on: maintenance windows (open at every hour), offer caps (far above the rate) and the health guardrail, every check carrying the device's health; on a commit without caps or the health guardrail, the deployments have what it takes",
  s19: 'check of known devices, as s1, on a project with an active deployment to a group none of them is in: each check reads the device\'s memberships to decide it (docs/architecture.md, "Group membership"), so that, against a commit before that read, the two sides differ by it alone',
  s20: 'our services against the floor in turns: s1\'s checks through the stack and through s17\'s floor, one step each at --start-rate, for --rounds rounds (the order turned each round: ours, floor, floor, ours, ...), each step after half a step of the same checks unmeasured; each round\'s ratio of our services\' CPU per check to the floor\'s, and the median of the rounds',
  s21: 'new devices under a device cap: checks of new devices of two owners that each hold --held-places device places (seeded in the store), one with a cap ten times that (each device registered), one at its cap (each device refused, over_limit): for each, the first check, then up to 20 more one at a time (median, 95th percentile, each process\'s CPU per check)',
  s22: 'our services against the floor at once: s1\'s checks through the stack and through s17\'s floor in the same seconds, one after the other, each side at --start-rate, for --rounds rounds, each after half a round of the same checks unmeasured; each round\'s ratio of our services\' CPU per check to the floor\'s, each side\'s processes read over the same seconds, and the median of the rounds',
} as const;
export type ScenarioName = keyof typeof SCENARIOS;

export interface BenchSettings {
  smoke: boolean;
  stepMs: number;
  maxSteps: number;
  /** A rate search's missed step is run again before the rate counts as missed (rate-search.ts). */
  confirmMisses: boolean;
  startRate: number;
  /** Known devices of s1 and s6. */
  devices: number;
  /** Checks each device of s1's and s3's fleets makes after its first, before anything is measured: 19 gives each device the 20 decision records of a settled device. */
  settledChecks: number;
  /** Devices of the fleet with deployments (s3, s4, s5, s9). */
  offerDevices: number;
  /** Devices downloading at once in s12. */
  downloadDevices: number;
  /** The deployment sizes whose summary s11 reads. */
  summaryDevices: number[];
  stormMs: number;
  /** Devices of the project s16 seeds. */
  fleetDevices: number;
  /** Devices of the second stack's project whose checks s16 compares with the large fleet's. */
  referenceFleetDevices: number;
  /** Device places each of s21's two owners holds when its checks are measured. */
  heldPlaces: number;
  /** Rounds of s20: each is one step of our services and one of the floor. */
  rounds: number;
  log: (message: string) => void;
  /** Awaited before each step of a rate search and each of s16's measured operations: a comparison passes the machine to its other side there (turns.ts). */
  beforeStep?: () => Promise<void>;
}

const LIFECYCLE = ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed'] as const;
const BOARDS = ['board-a', 'board-b'] as const;
/** How long s17 watches the processes with no request before its search (CPU ticks are 10 ms). */
const IDLE_MEASURE_MS = 20_000;
/** s20 reads each process's CPU in slices of its steps this long: whether a round's extra cost is a warm-up or a state. */
const S20_SLICE_MS = 5_000;

/** The hex prefixes of 16 or 256 parts of the id space in bit-reversed order, as the console reads them. */
function spreadParts(count: 16 | 256): string[] {
  const bits = count === 16 ? 4 : 8;
  return Array.from({ length: count }, (_, index) => Number.parseInt(index.toString(2).padStart(bits, '0').split('').reverse().join(''), 2).toString(16).padStart(bits / 4, '0'));
}

/** What a team does around a large fleet, each a read through the API (s16 measures each). */
function fleetOperations(
  read: (path: string) => Promise<unknown>,
  of: { groupId: string; channelId: string; deviceId: string; id: string; lateId: string; deploymentId: string },
): Record<string, () => Promise<unknown>> {
  return {
    'device page': () => read('/devices/?limit=50'),
    'device page by chip family': () => read('/devices/?limit=50&chip_family=esp32c3'),
    'device page by group': () => read(`/devices/?limit=50&group_id=${of.groupId}`),
    'device page by channel': () => read(`/devices/?limit=50&channel_id=${of.channelId}`),
    'device page by text': () => read(`/devices/?limit=50&q=${of.deviceId}`),
    'a later device page': () => read(`/devices/?limit=50&after=${of.deviceId}`),
    'a later device page by id': () => read(`/devices/?limit=50&after_id=${of.id}`),
    'a later device page from late in a bucket': () => read(`/devices/?limit=50&after_id=${of.lateId}`),
    'device by its device_id': () => read(`/devices/?limit=1&device_id=${of.deviceId}`),
    'device detail': () => read(`/devices/${of.id}/`),
    'reach of a group': () => read(`/reach/?group_ids=${of.groupId}`),
    'chip families': () => read('/chip-families/'),
    'groups with their counts': () => read('/groups/'),
    'channels with their counts': () => read('/channels/'),
    'deployment summary': () => read(`/deployments/${of.deploymentId}/summary/`),
    'audit list': () => read('/audit/?limit=50'),
  };
}

/**
 * The first seeded device from `from` on whose UUID falls in the last eighth of its finest page
 * bucket: at a million devices fewer than about 30 follow it there, so a page after it reads the
 * next bucket too (the later page whose cost the device's place no longer decides by chance).
 */
function lateInItsBucket(idOf: (index: number) => string, from: number, devices: number): string {
  for (let step = 0; step < devices; step += 1) {
    const id = idOf((from + step) % devices);
    if (Number.parseInt(id.slice(DEVICE_PAGE_LEVELS, DEVICE_PAGE_LEVELS + 4), 16) >= 0xe000) return id;
  }
  return idOf(from);
}

/** The CPU per request of the named processes together, in ms (3 decimals). */
function cpuMsPerCheckOf(usage: Record<string, { cpuMsPerRequest: number }>, names: readonly string[]): number {
  return Math.round(names.reduce((total, name) => total + (usage[name]?.cpuMsPerRequest ?? 0), 0) * 1000) / 1000;
}

/** The median round of s20's or s22's rounds: each side's CPU per check, and the ratio with its range. */
function mediansOfRounds(rounds: ReadonlyArray<{ oursCpuMsPerCheck: number; floorCpuMsPerCheck: number; servicesToFloor: number | null }>) {
  const medianOf = (values: number[]) => Math.round(quantile([...values].sort((a, b) => a - b), 0.5) * 1000) / 1000;
  const ratios = rounds.flatMap((round) => (round.servicesToFloor === null ? [] : [round.servicesToFloor]));
  return {
    oursCpuMsPerCheck: medianOf(rounds.map((round) => round.oursCpuMsPerCheck)),
    floorCpuMsPerCheck: medianOf(rounds.map((round) => round.floorCpuMsPerCheck)),
    servicesToFloor: ratios.length ? medianOf(ratios) : null,
    servicesToFloorRange: ratios.length ? [Math.min(...ratios), Math.max(...ratios)] : null,
  };
}

/** Runs scenarios against one stack, setting up each fleet the first time a scenario needs it. */
export class Scenarios {
  private readonly gateway: Gateway;
  private readonly pids: Record<string, number>;
  private known?: Promise<Fleet>;
  private offering?: Promise<{ fleet: Fleet; deploymentIds: string[]; betaChannelId: string }>;
  private guardedOffering?: Promise<{ fleet: Fleet; features: string[] }>;
  private groupTargeted?: Promise<Fleet>;
  private statusTarget?: Promise<{ deploymentId: string; buildNumber: number }>;
  private statusCounter = 0;
  /** Steady check rate for s6 and s9: half of what s1/s3 held, once measured. */
  private knownMaxRate = 0;
  /** s1's result, when this run measured it: s17 compares our services' CPU per check with the floor. */
  private s1Result: RateSearchResult | undefined;
  /** PostgreSQL's statement counter, where the stack runs a local PostgreSQL. */
  private readonly countStatements: (() => number | undefined) | undefined;
  /** s0 is measured once per run: s1 compares with it. */
  private baselineResult?: Promise<RateSearchResult>;
  private offerMaxRate = 0;

  constructor(
    private readonly rootDir: string,
    private readonly stack: RunningStack,
    private readonly settings: BenchSettings,
    /** Node.js arguments for the bench's own servers (s0's and s17's), as the stack's services get them: `--cpu-prof` profiles them too. */
    private readonly serverNodeArgs: string[] = [],
  ) {
    this.gateway = new Gateway(stack.gatewayUrl);
    this.pids = stackPids(stack);
    this.countStatements = statementCounter(stack.postgresUrl);
  }

  /** The store's processes this stack started: FerretDB, and PostgreSQL where it is FerretDB's backend. */
  private storePids(): Record<string, number> {
    const { ferretdb, postgres } = this.pids;
    return { ...(ferretdb ? { ferretdb } : {}), ...(postgres ? { postgres } : {}) };
  }

  close(): Promise<void> {
    return this.gateway.close();
  }

  async run(name: ScenarioName): Promise<object> {
    switch (name) {
      case 's0':
        return this.baseline();
      case 's1': {
        const baseline = await this.baseline();
        const known = await this.knownDevices();
        const result = await this.search('s1', (index) => this.checkKnown(known, index));
        this.knownMaxRate = result.maxRate;
        this.s1Result = result;
        return { ...result, s0: baseline, ...this.againstS0('s1', result, baseline) };
      }
      case 's2': {
        const fleet = await this.knownDevices();
        const run = Date.now().toString(36);
        return this.search('s2', (index) => this.check(fleet, `new-${run}-${index}`));
      }
      case 's3': {
        const { fleet } = await this.offeringFleet();
        const result = await this.search('s3', (index) => this.checkOffering(fleet, index));
        this.offerMaxRate = result.maxRate;
        return result;
      }
      case 's4':
        return this.statusIngestion();
      case 's5': {
        const { fleet } = await this.offeringFleet();
        const target = await this.statusDeployment();
        return this.search('s5', (index) => (index % 10 === 9 ? this.report(fleet, target, this.statusCounter++) : this.checkOffering(fleet, index)));
      }
      case 's6':
        return this.wakeStorm();
      case 's9':
        return this.propagation();
      case 's10':
        return this.preview();
      case 's11': {
        const sizes: Record<string, object> = {};
        for (const devices of this.settings.summaryDevices) {
          const result = await this.summaryAtScale(devices);
          sizes[String(devices)] = result;
          // A release that counts on every call leaves its store busy with abandoned counts for minutes: no larger size after it failed.
          if (result.alone.calls === 0) break;
        }
        return { sizes };
      }
      case 's12':
        return this.downloads();
      case 's15':
        return this.patchBuild();
      case 's16':
        return this.largeFleet();
      case 's17':
        return this.stackFloor();
      case 's20':
        return this.floorInTurns();
      case 's21':
        return this.cappedRegistration();
      case 's22':
        return this.floorAtOnce();
      case 's18': {
        const { fleet, features } = await this.guardedOfferingFleet();
        return { ...(await this.search('s18', (index) => this.checkGuarded(fleet, index))), features };
      }
      case 's19': {
        const fleet = await this.groupTargetedFleet();
        return this.search('s19', (index) => this.check(fleet, `grouped-${index % this.settings.devices}`));
      }
      case 's13':
        return measureDriverCost(this.stack.mongodbUri, this.settings);
      case 's14':
        return measureHistoryCost(this.stack.mongodbUri, this.storePids(), this.settings);
    }
  }

  /**
   * The summary of a deployment all of whose `devices` devices reported, read 40 times alone (CPU
   * per call) and 40 times while the offering fleet checks at a steady rate (latency): ten calls
   * moved the median by more than a goal's margin from run to run. A release
   * that counts on every call may not answer within the request deadline: the calls then stop at
   * the second failure, so that its abandoned counts do not load the rest of the run.
   */
  private async summaryAtScale(devices: number) {
    const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'summary fleet');
    // Started once its devices are there, as a deployment of a real fleet is.
    const { deploymentId } = await createDraftDeployment(this.gateway, fleet, { version_label: 'summary' }, [fleet.defaultChannelId], 100);
    const started = Date.now();
    const seeded = await seedDeploymentEvents(this.stack, { projectId: fleet.projectId, channelId: fleet.defaultChannelId }, deploymentId, devices, this.settings.log);
    this.settings.log(`s11: seeded ${seeded.events} events of ${devices} devices in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await startDeployment(this.gateway, fleet, deploymentId);
    const path = `/api/v1/projects/${fleet.projectId}/deployments/${deploymentId}/summary/`;
    const calls = this.settings.smoke ? 3 : 40;
    // The first summary of a target set waits for a count of the fleet (registry's RecentCounts),
    // which the start began: how long after the start one is answered, asking every 2 s for a minute.
    const firstAnswer = await this.firstSummary(path, fleet.userToken, 60_000);

    const before = usageOf(this.pids);
    const alone = await this.summaryCalls(path, fleet.userToken, calls, 0);
    const usage = perRequest(before, usageOf(this.pids), alone.answered.length + alone.failures.length);

    if (alone.answered.length === 0) {
      this.settings.log(`  summary of ${devices} devices failed alone: ${JSON.stringify(alone.failures)}; not read under load`);
      return { devices, events: seeded.events, firstAnswer, alone: { calls: alone.answered.length, failures: alone.failures }, usage, matchesSeeded: false };
    }
    const { fleet: checking } = await this.offeringFleet();
    const rate = this.settings.smoke ? 20 : 50;
    const durationMs = calls * 600 + 2_000;
    const load = runOpenLoop({ phases: [{ rate, durationMs }], send: (index) => this.checkOffering(checking, index) });
    await sleep(1_000);
    const underLoad = await this.summaryCalls(path, fleet.userToken, calls, 500);
    const checks = summarize(await load);

    const last = alone.answered.at(-1)?.body;
    const counted = last ? Object.fromEntries(Object.entries(last.devices_by_status as Record<string, number>).filter(([, count]) => count > 0)) : null;
    const matchesSeeded =
      counted !== null && JSON.stringify(sorted(counted)) === JSON.stringify(sorted(seeded.byStatus)) && last.failure_count === seeded.failures && last.targeted_devices === devices;
    const at = (samples: { ms: number }[], q: number) => (samples.length ? Math.round(quantile(samples.map((sample) => sample.ms).sort((a, b) => a - b), q) * 10) / 10 : null);
    const median = (samples: { ms: number }[]) => at(samples, 0.5);
    const result = {
      devices,
      events: seeded.events,
      firstAnswer,
      alone: { calls: alone.answered.length, failures: alone.failures, medianMs: median(alone.answered), p90Ms: at(alone.answered, 0.9), maxMs: Math.max(0, ...alone.answered.map((sample) => Math.round(sample.ms))) },
      underLoad: { checkRate: rate, calls: underLoad.answered.length, failures: underLoad.failures, medianMs: median(underLoad.answered), p90Ms: at(underLoad.answered, 0.9), maxMs: Math.max(0, ...underLoad.answered.map((sample) => Math.round(sample.ms))), checks },
      usage,
      matchesSeeded,
    };
    this.settings.log(`  summary of ${devices} devices: ${result.alone.medianMs} ms alone, ${result.underLoad.medianMs} ms under ${rate} checks/s; failures ${JSON.stringify(alone.failures.concat(underLoad.failures))}; counts match the seeded ones: ${matchesSeeded}`);
    return result;
  }

  private async firstSummary(path: string, token: string, withinMs: number) {
    const started = performance.now();
    const failures: string[] = [];
    while (performance.now() - started < withinMs) {
      try {
        await this.gateway.api('GET', path, token);
        return { afterMs: Math.round(performance.now() - started), failures };
      } catch (error) {
        failures.push((error as Error).message.replace(/^GET \S+: /, '').slice(0, 80));
        await sleep(2_000);
      }
    }
    return { afterMs: null, failures };
  }

  private async summaryCalls(path: string, token: string, calls: number, pauseMs: number) {
    const answered: Array<{ ms: number; body: any }> = [];
    const failures: string[] = [];
    for (let call = 0; call < calls && failures.length < 2; call++) {
      const started = performance.now();
      try {
        answered.push({ body: await this.gateway.api('GET', path, token), ms: performance.now() - started });
      } catch (error) {
        failures.push(`${(error as Error).message.slice(0, 120)} after ${Math.round(performance.now() - started)} ms`);
      }
      if (pauseMs) await sleep(pauseMs);
    }
    return { answered, failures };
  }

  /**
   * `downloadDevices` devices each download a build at once, first with the offers of the stack's
   * gateway (its own signed endpoint), then with those of a second gateway on the same services
   * with DOWNLOAD_URLS=presigned. Every byte is checked against the build's SHA-256.
   */
  private async downloads() {
    const count = this.settings.downloadDevices;
    const binary = randomBuild(this.settings.smoke ? 256 * 1024 : 1_536 * 1024);
    const sha256 = createHash('sha256').update(binary).digest('hex');
    const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'download fleet');
    await createDeployment(this.gateway, fleet, { version_label: 'download' }, [fleet.defaultChannelId], 100, binary);
    const presigning = await this.extraGateway({ DOWNLOAD_URLS: 'presigned' });
    try {
      const modes: Record<string, object> = {};
      for (const [mode, gateway] of [['gateway', this.gateway], ['presigned', presigning.gateway]] as const) {
        const urls: string[] = [];
        await inParallel(count, 32, async (index) => {
          const answer = await gateway.post('/api/v1/ota/check/', fleet.deviceToken, checkBody(`dl-${mode}-${index}`), true);
          if (!answer.body?.update_available) throw new Error(`s12: check of dl-${mode}-${index} offered nothing: ${answer.status} ${JSON.stringify(answer.body)}`);
          urls[index] = answer.body.url;
        });
        const pids = { ...this.pids, 'presigning gateway': presigning.pid };
        const before = usageOf(pids);
        const started = performance.now();
        const fetched = await Promise.all(
          urls.map(async (url) => {
            const response = await fetch(url);
            const bytes = Buffer.from(await response.arrayBuffer());
            return response.status === 200 && createHash('sha256').update(bytes).digest('hex') === sha256;
          }),
        );
        const seconds = (performance.now() - started) / 1000;
        const mib = (count * binary.length) / 2 ** 20;
        const usage = perRequest(before, usageOf(pids), mib);
        const origin = new URL(urls[0]!).origin;
        modes[mode] = {
          servedBy: origin === new URL(this.stack.s3Endpoint).origin ? 'object storage' : 'gateway',
          devices: count,
          mib: Math.round(mib * 10) / 10,
          seconds: Math.round(seconds * 100) / 100,
          mibPerSecond: Math.round((mib / seconds) * 10) / 10,
          wrongOrMissing: fetched.filter((ok) => !ok).length,
          cpuMsPerMiB: Object.fromEntries(Object.entries(usage).map(([name, { cpuMsPerRequest }]) => [name, cpuMsPerRequest])),
        };
        this.settings.log(`  ${mode}: ${JSON.stringify(modes[mode])}`);
      }
      return { buildBytes: binary.length, modes };
    } finally {
      await presigning.stop();
    }
  }

  /**
   * s15: one delta patch, asked for through the API as an operator (or a deployment's start) does,
   * made by the artifacts service's worker: detools' create_patch, then its apply_patch to verify.
   * The artifacts process tree is sampled every 50 ms while it works: detools runs as its child, and
   * its CPU time joins the tree's once the worker has reaped it.
   */
  private async patchBuild() {
    const size = this.settings.smoke ? 256 * 1024 : 1_536 * 1024;
    const base = randomBuild(size);
    const inserted = randomBytes(Math.floor(size / 64));
    const cut = Math.floor(size / 3);
    const target = Buffer.concat([base.subarray(0, cut), inserted, base.subarray(cut, size - inserted.length)]);
    for (let at = 100; at < target.length; at += 4096) target[at] = target[at]! ^ 0x5a;
    const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'patch fleet');
    const upload = async (binary: Buffer, label: string) => {
      const form = new FormData();
      form.append('manifest', JSON.stringify({ framework: FRAMEWORK, chip_family: CHIP, version_label: label }));
      form.append('binary', new Blob([binary]), 'firmware.bin');
      return (await this.gateway.api('POST', `/api/v1/projects/${fleet.projectId}/artifacts/`, fleet.userToken, form)) as { id: string };
    };
    const [from, to] = [await upload(base, 'patch-base'), await upload(target, 'patch-target')];
    const tree = { artifacts: this.pids.artifacts! };
    const before = usageOf(tree).artifacts!;
    let peakBytes = before.rssBytes;
    const sampler = setInterval(() => (peakBytes = Math.max(peakBytes, usageOf(tree).artifacts!.rssBytes)), 50);
    const started = performance.now();
    const patches = `/api/v1/projects/${fleet.projectId}/artifacts/${to.id}/patches/`;
    try {
      await this.gateway.api('POST', patches, fleet.userToken, { base_artifact_id: from.id });
      for (;;) {
        const [patch] = (await this.gateway.api('GET', patches, fleet.userToken)) as Array<{ state: string; size: number; reason: string }>;
        if (patch?.state === 'failed') throw new Error(`s15: the patch failed: ${patch.reason}`);
        if (patch?.state === 'ready') {
          const seconds = (performance.now() - started) / 1000;
          const after = usageOf(tree).artifacts!;
          const result = {
            imageBytes: size,
            patchBytes: patch.size,
            ofImage: Math.round((patch.size / size) * 1000) / 1000,
            seconds: Math.round(seconds * 100) / 100,
            artifactsCpuSeconds: Math.round(after.cpuMs - before.cpuMs) / 1000,
            artifactsIdleMiB: Math.round((before.rssBytes / 2 ** 20) * 10) / 10,
            artifactsPeakMiB: Math.round((peakBytes / 2 ** 20) * 10) / 10,
          };
          this.settings.log(`  ${JSON.stringify(result)}`);
          return result;
        }
        if (performance.now() - started > 600_000) throw new Error('s15: the patch was not ready within 10 minutes');
        await sleep(100);
      }
    } finally {
      clearInterval(sampler);
    }
  }

  /**
   * s16: a fleet the size of --fleet-devices in one project, seeded into the store (seed-fleet.ts),
   * and what a team does around it through the API. Each operation is called up to 20 times, and
   * for at most a minute, one at a time; a call answered with an error is counted, not retried.
   */
  private async largeFleet() {
    const devices = this.settings.fleetDevices;
    const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'large fleet');
    const project = (path: string) => `/api/v1/projects/${fleet.projectId}${path}`;
    const call = (method: string, path: string, body?: unknown) => this.gateway.api(method, project(path), fleet.userToken, body);
    // A read that the gateway does not answer within this long is given up here: the stack is
    // wedged, and what follows would measure nothing but that.
    const CALL_GIVE_UP_MS = 120_000;
    const read = (path: string) => this.gateway.api('GET', project(path), fleet.userToken, undefined, CALL_GIVE_UP_MS);
    const beta = (await call('POST', '/channels/', { name: 'beta' })) as { id: string };
    const groups: Array<{ id: string }> = [];
    for (let index = 0; index < 10; index++) groups.push(await call('POST', '/groups/', { name: `group-${index}` }));
    // Each process's memory with the project still empty, sampled once before any of the work below.
    const emptyMemory = usageOf(this.pids);
    // The goal is each process's memory with the fleet at most 1.5 times it with an empty project:
    // with the idle sample alone, that also counted what the work itself takes whatever the fleet's
    // size (a young generation grown to its size, compiled code), so the same work is also done on
    // a second project of the same layout that stays empty, and each process's peak taken.
    const emptyPeak = await this.peakMemoryOf(() => this.workOnEmptyProject());
    this.settings.log(`  seeding ${devices} devices`);
    const seeded = await seedFleet(this.stack, { projectId: fleet.projectId, channelIds: [fleet.defaultChannelId, beta.id], groupIds: groups.map((group) => group.id) }, devices, this.settings.log);
    const mib = (bytes: number | undefined) => (bytes === undefined ? null : Math.round((bytes / 2 ** 20) * 10) / 10);
    this.settings.log(`  seeded in ${seeded.seconds} s; the store grew from ${mib(seeded.storeBytesBefore)} to ${mib(seeded.storeBytesAfter)} MiB`);
    const settlingSeconds = await settleStore(this.stack.postgresUrl);
    this.settings.log(`  the store vacuumed and analyzed in ${settlingSeconds} s`);

    const timed = async (work: () => Promise<unknown>) => {
      const started = performance.now();
      try {
        await work();
        return { ms: Math.round(performance.now() - started), error: '' };
      } catch (error) {
        return { ms: Math.round(performance.now() - started), error: String((error as Error).message).slice(0, 200) };
      }
    };
    // A deployment to the whole fleet: made as a draft, then started (the summary reads it).
    let deploymentId = '';
    const created = await timed(async () => (deploymentId = (await createDraftDeployment(this.gateway, fleet, { version_label: 'fleet-wide' }, [], 100)).deploymentId));
    const start = await timed(() => startDeployment(this.gateway, fleet, deploymentId));
    const middle = seededDeviceId(Math.floor(devices / 2));
    const one = { id: seeded.idOf(Math.floor(devices / 2)) };
    const late = lateInItsBucket(seeded.idOf, Math.floor(devices / 2), devices);
    const operations = fleetOperations(read, { groupId: groups[3]!.id, channelId: beta.id, deviceId: middle, id: one.id, lateId: late, deploymentId });
    const results: Record<string, object> = {};
    // Each process's peak, sampled twice a second from here to the end, with what was running then.
    let peakMemory = usageOf(this.pids);
    let phase = 'settled';
    const peakDuring: Record<string, string> = {};
    // A service's heap as its metrics give it near its peak: whether the peak is the heap's.
    const heapAtPeak: Record<string, HeapReading> = {};
    // Each phase's own peak too: which of them sets a process's peak, and by how much over the others.
    const peakByPhase: Record<string, Record<string, number>> = {};
    // Sampled off this process's event loop, which times every call measured (usageOfInBackground);
    // one sample at a time. While an operation's calls are timed, between two calls only: a sample
    // reads every process's smaps_rollup, which walks its page tables in the kernel, and no timed
    // call should share the machine with that (docs/performance.md, "The benchmark's own memory
    // sampler": the slow calls' tails were not this).
    let sampling: Promise<void> | undefined;
    let lastSampleAt = 0;
    let timingCalls = false;
    const samplePeak = () =>
      (sampling ??= (async () => {
        lastSampleAt = performance.now();
        const sampledPhase = phase;
        for (const [process, usage] of Object.entries(await usageOfInBackground(this.pids))) {
          const ofPhase = (peakByPhase[sampledPhase] ??= {});
          ofPhase[process] = Math.max(ofPhase[process] ?? 0, usage.rssBytes);
          if (usage.rssBytes <= (peakMemory[process]?.rssBytes ?? 0)) continue;
          peakMemory[process] = usage;
          peakDuring[process] = sampledPhase;
          // Not while the checks run: a scrape resets the loop-delay figures their steps read.
          const metricsUrl = this.stack.metricsUrls[process];
          if (metricsUrl && sampledPhase !== 'checks') void heapOf(metricsUrl).then((heap) => heap && (heapAtPeak[process] = heap));
        }
      })().finally(() => (sampling = undefined)));
    // How long this process's own event loop was held while an operation's calls ran: what the
    // benchmark itself may have added to their times.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const peakSampler = setInterval(() => timingCalls || void samplePeak(), 500).unref();
    let wedged = '';
    const measure = async (named: Record<string, () => Promise<unknown>>) => {
      for (const [name, operation] of Object.entries(named)) {
        // In a comparison, the two sides measure each operation in turn, so that what the machine
        // does meanwhile (the other stack's store, idle but a million devices large) falls on both.
        await this.settings.beforeStep?.();
        if (wedged) {
          results[name] = { calls: 0, skipped: `the stack stopped answering during ${wedged}` };
          continue;
        }
        phase = name;
        const startedAt = new Date().toISOString();
        const writesBefore = await storeWrites(this.stack.postgresUrl);
        const before = usageOf(this.pids);
        loopDelay.reset();
        const calls: Array<{ ms: number; error: string }> = [];
        const until = performance.now() + 60_000;
        timingCalls = true;
        await sampling;
        while (!wedged && calls.length < 20 && (calls.length < 3 || performance.now() < until)) {
          const outcome = await timed(operation);
          calls.push(outcome);
          if (/aborted|timeout/i.test(outcome.error)) wedged = name;
          if (performance.now() - lastSampleAt >= 500) await samplePeak();
        }
        timingCalls = false;
        const after = usageOf(this.pids);
        const loopHeldMs = Math.round(loopDelay.max / 1e6);
        const written = writesBetween(writesBefore, await storeWrites(this.stack.postgresUrl));
        await samplePeak();
        const cpu = perRequest(before, after, calls.length);
        const sorted = calls.map((one) => one.ms).sort((a, b) => a - b);
        const errors = [...new Set(calls.filter((one) => one.error).map((one) => one.error))];
        results[name] = {
          calls: calls.length,
          medianMs: quantile(sorted, 0.5),
          p95Ms: quantile(sorted, 0.95),
          errors,
          cpuMsPerCall: Object.fromEntries(Object.entries(cpu).map(([process, usage]) => [process, usage.cpuMsPerRequest])),
          benchLoopHeldMs: loopHeldMs,
          // Each call's time in the order made: whether a tail is the first calls or spread.
          callsMs: calls.map((one) => one.ms),
          startedAt,
          // What the store wrote meanwhile: checkpoints and writes of its own under these reads.
          storeWrites: written,
        };
        this.settings.log(`  ${name}: ${JSON.stringify(results[name])}`);
      }
    };
    await measure(operations);
    // A deployment's worth of per-device statuses (every device offered, most confirmed, some
    // failed), written into rollout's store after the summary was measured: they are not counted.
    this.settings.log(`  seeding the statuses of ${devices} devices`);
    phase = 'seeding the statuses';
    const statuses = await seedStatuses(this.stack, { projectId: fleet.projectId, deploymentId }, seeded.idOf, devices, this.settings.log);
    const statusSettlingSeconds = await settleStore(this.stack.postgresUrl);
    this.settings.log(`  seeded in ${statuses.seconds} s; the store vacuumed and analyzed in ${statusSettlingSeconds} s`);
    const states = `/deployments/${deploymentId}/states/`;
    await measure({
      'states page': () => read(`${states}?limit=50`),
      'states page at one status': () => read(`${states}?limit=50&status=failed`),
      'a later states page': () => read(`${states}?limit=50&after_id=${one.id}`),
    });
    phase = 'checks';
    await this.settings.beforeStep?.();
    const checks = wedged ? { skipped: `the stack stopped answering during ${wedged}` } : await this.checksBesideSmallerFleet(fleet, devices);
    phase = 'preview';
    // The preview of the fleet-wide deployment in 256 parts, as the console reads a large fleet
    // (in bit-reversed order, spread over the id space): when the first part answered, how long
    // the whole took, and how far the estimate of the whole from the parts read by a given time
    // was from the whole.
    let preview: object = { skipped: `the stack stopped answering during ${wedged}` };
    await this.settings.beforeStep?.();
    if (!wedged) {
      const before = usageOf(this.pids);
      const started = performance.now();
      let firstPartMs = 0;
      let previewed = 0;
      const partMs: number[] = [];
      const soFar: Record<string, number> = {};
      const estimates: Array<{ atMs: number; parts: number; counts: Record<string, number> }> = [];
      for (const [index, prefix] of spreadParts(256).entries()) {
        const partStarted = performance.now();
        const answer = (await this.gateway.api('GET', project(`/deployments/${deploymentId}/preview/?id_prefix=${prefix}`), fleet.userToken, undefined, CALL_GIVE_UP_MS)) as { device_count: number; outcomes: Record<string, { count: number }> };
        partMs.push(performance.now() - partStarted);
        if (index === 0) firstPartMs = Math.round(performance.now() - started);
        previewed += answer.device_count;
        for (const [outcome, { count }] of Object.entries(answer.outcomes)) soFar[outcome] = (soFar[outcome] ?? 0) + count;
        estimates.push({ atMs: performance.now() - started, parts: index + 1, counts: { ...soFar } });
      }
      const cpu = perRequest(before, usageOf(this.pids), 1);
      const sorted = partMs.sort((a, b) => a - b);
      // The largest error of an outcome that holds at least 1% of the fleet, estimated from the parts read by each time.
      const estimateAt = (ms: number) => {
        const last = estimates.filter((one) => one.atMs <= ms).at(-1);
        if (!last) return null;
        const errors = Object.entries(soFar)
          .filter(([, whole]) => whole >= previewed / 100)
          .map(([outcome, whole]) => Math.abs((last.counts[outcome]! * 256) / last.parts - whole) / whole);
        return { parts: last.parts, furthestOffPercent: Math.round(Math.max(0, ...errors) * 1000) / 10 };
      };
      preview = {
        parts: 256,
        devicesPreviewed: previewed,
        firstPartMs,
        partMedianMs: Math.round(quantile(sorted, 0.5)),
        partP95Ms: Math.round(quantile(sorted, 0.95)),
        seconds: Math.round((performance.now() - started) / 100) / 10,
        estimateOfTheWhole: { at2s: estimateAt(2_000), at10s: estimateAt(10_000), at60s: estimateAt(60_000) },
        cpuSeconds: Object.fromEntries(Object.entries(cpu).map(([process, usage]) => [process, Math.round(usage.cpuMsPerRequest / 100) / 10])),
      };
      this.settings.log(`  preview in parts: ${JSON.stringify(preview)}`);
      // The same preview as one request, within its own deadline (PREVIEW_TIMEOUT_MS).
      const wholeBefore = usageOf(this.pids);
      const whole = await timed(() => this.gateway.api('GET', project(`/deployments/${deploymentId}/preview/`), fleet.userToken, undefined, CALL_GIVE_UP_MS));
      const wholeCpu = perRequest(wholeBefore, usageOf(this.pids), 1);
      preview = { ...preview, inOneRequest: { seconds: Math.round(whole.ms / 100) / 10, error: whole.error, cpuSeconds: Object.fromEntries(Object.entries(wholeCpu).map(([process, usage]) => [process, Math.round(usage.cpuMsPerRequest / 100) / 10])) } };
      this.settings.log(`  preview in one request: ${JSON.stringify((preview as { inOneRequest: object }).inOneRequest)}`);
    }
    phase = 'bulk changes';
    await this.settings.beforeStep?.();
    const bulkChanges = wedged ? { skipped: `the stack stopped answering during ${wedged}` } : await this.bulkMembershipChanges(fleet, groups[3]!.id);
    phase = 'changes by ids';
    const changesByIds = wedged ? { skipped: `the stack stopped answering during ${wedged}` } : await this.membershipChangesByIds(fleet);
    await samplePeak();
    clearInterval(peakSampler);
    loopDelay.disable();
    return {
      devices,
      seedingSeconds: seeded.seconds,
      devicesSeededPerSecond: Math.round(devices / Math.max(0.1, seeded.seconds)),
      storeMiBBefore: mib(seeded.storeBytesBefore),
      storeMiBAfter: mib(seeded.storeBytesAfter),
      createDeployment: created,
      startDeployment: start,
      statusSeedingSeconds: statuses.seconds,
      settlingSeconds,
      statusSettlingSeconds,
      operations: results,
      checksOfKnownDevices: checks,
      preview,
      bulkChanges,
      changesByIds,
      wedged: wedged || null,
      emptyProjectMemoryMiB: Object.fromEntries(Object.entries(emptyMemory).map(([process, usage]) => [process, mib(usage.rssBytes)])),
      emptyProjectPeakMemoryMiB: Object.fromEntries(Object.entries(emptyPeak).map(([process, bytes]) => [process, mib(bytes)])),
      peakMemoryMiB: Object.fromEntries(Object.entries(peakMemory).map(([process, usage]) => [process, mib(usage.rssBytes)])),
      peakMemoryDuring: peakDuring,
      peakMemoryMiBByPhase: Object.fromEntries(Object.entries(peakByPhase).map(([name, peaks]) => [name, Object.fromEntries(Object.entries(peaks).map(([process, bytes]) => [process, mib(bytes)]))])),
      heapAtPeakMiB: heapAtPeak,
    };
  }

  /** Each process's peak resident memory while `work` runs, sampled twice a second. */
  private async peakMemoryOf(work: () => Promise<void>): Promise<Record<string, number>> {
    const peak: Record<string, number> = {};
    let sampling: Promise<void> | undefined;
    const sample = () =>
      (sampling ??= usageOfInBackground(this.pids)
        .then((usages) => {
          for (const [process, usage] of Object.entries(usages)) peak[process] = Math.max(peak[process] ?? 0, usage.rssBytes);
        })
        .finally(() => (sampling = undefined)));
    await sample();
    const sampler = setInterval(sample, 500).unref();
    try {
      await work();
    } finally {
      clearInterval(sampler);
      await sample();
    }
    return peak;
  }

  /**
   * What s16 does around its fleet, on a project of the same layout with no devices: the
   * operations (five calls each), a deployment to the whole project and its preview in 256 parts
   * and as one request. An answer that is an error (no such device) is as good as any here.
   */
  private async workOnEmptyProject(): Promise<void> {
    const empty = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'empty fleet');
    const project = (path: string) => `/api/v1/projects/${empty.projectId}${path}`;
    // An empty project answers faster than the user token's rate limit allows; this work is not timed.
    const read = (path: string) => this.gateway.apiWithinRateLimit('GET', project(path), empty.userToken);
    const beta = (await this.gateway.api('POST', project('/channels/'), empty.userToken, { name: 'beta' })) as { id: string };
    const groupIds: string[] = [];
    for (let index = 0; index < 10; index++) groupIds.push(((await this.gateway.api('POST', project('/groups/'), empty.userToken, { name: `group-${index}` })) as { id: string }).id);
    const { deploymentId } = await createDraftDeployment(this.gateway, empty, { version_label: 'fleet-wide' }, [], 100);
    await startDeployment(this.gateway, empty, deploymentId).catch(() => undefined);
    const absent = seededDeviceId(0);
    const operations = fleetOperations(read, { groupId: groupIds[3]!, channelId: beta.id, deviceId: absent, id: randomUUID(), lateId: randomUUID(), deploymentId });
    for (const operation of Object.values(operations)) for (let call = 0; call < 5; call++) await operation().catch(() => undefined);
    for (const prefix of spreadParts(256)) await read(`/deployments/${deploymentId}/preview/?id_prefix=${prefix}`);
    await read(`/deployments/${deploymentId}/preview/`);
  }

  /**
   * s16's checks of known devices, as they poll, beside the same checks on a second stack whose
   * project holds --reference-fleet-devices (50,000): how the cost of a check grows with the fleet.
   * The two take turns, ten seconds each, three times, at the same rate, so that a machine that
   * slows part way through slows both; each device checked is drawn from its whole fleet and reports
   * what it was seeded with.
   */
  private async checksBesideSmallerFleet(fleet: Fleet, devices: number) {
    const referenceDevices = this.settings.referenceFleetDevices;
    const reference = await startBenchStack(this.rootDir, `${Date.now().toString(36)}ref`);
    const referenceGateway = new Gateway(reference.gatewayUrl);
    try {
      // The same layout as the large fleet's: two channels, ten groups, a started fleet-wide
      // deployment and its per-device statuses.
      const referenceFleet = await createFleet(referenceGateway, this.rootDir, reference.gatewayEnv, 'reference fleet');
      const call = (method: string, path: string, body?: unknown) => referenceGateway.api(method, `/api/v1/projects/${referenceFleet.projectId}${path}`, referenceFleet.userToken, body);
      const beta = (await call('POST', '/channels/', { name: 'beta' })) as { id: string };
      const groupIds: string[] = [];
      for (let index = 0; index < 10; index++) groupIds.push(((await call('POST', '/groups/', { name: `group-${index}` })) as { id: string }).id);
      this.settings.log(`  seeding ${referenceDevices} devices on a second stack, to compare the checks with`);
      const seeded = await seedFleet(reference, { projectId: referenceFleet.projectId, channelIds: [referenceFleet.defaultChannelId, beta.id], groupIds }, referenceDevices, this.settings.log);
      const { deploymentId } = await createDraftDeployment(referenceGateway, referenceFleet, { version_label: 'fleet-wide' }, [], 100);
      await startDeployment(referenceGateway, referenceFleet, deploymentId);
      await seedStatuses(reference, { projectId: referenceFleet.projectId, deploymentId }, seeded.idOf, referenceDevices, this.settings.log);
      await settleStore(reference.postgresUrl);
      const rate = this.settings.smoke ? 10 : 40;
      const turnMs = this.settings.smoke ? 2_000 : 10_000;
      const sides = [
        { name: 'large', gateway: this.gateway, fleet, devices, pids: this.pids, samples: [] as Awaited<ReturnType<typeof runOpenLoop>>, cpuMs: {} as Record<string, number> },
        { name: 'reference', gateway: referenceGateway, fleet: referenceFleet, devices: referenceDevices, pids: stackPids(reference), samples: [] as Awaited<ReturnType<typeof runOpenLoop>>, cpuMs: {} as Record<string, number> },
      ];
      for (let turn = 0; turn < 3; turn++) {
        for (const side of sides) {
          const before = usageOf(side.pids);
          side.samples.push(
            ...(await runOpenLoop({
              phases: [{ rate, durationMs: turnMs }],
              send: (index) => {
                const device = (((turn * rate * turnMs) / 1000 + index) * 7919) % side.devices;
                return side.gateway.post(
                  '/api/v1/ota/check/',
                  side.fleet.deviceToken,
                  checkBody(seededDeviceId(device), { framework: 'esp_idf', chip_family: SEEDED_CHIP_FAMILIES[device % SEEDED_CHIP_FAMILIES.length], current_build_number: 1 + (device % SEEDED_BUILDS) }),
                );
              },
            })),
          );
          const after = usageOf(side.pids);
          for (const process of Object.keys(after)) side.cpuMs[process] = (side.cpuMs[process] ?? 0) + after[process]!.cpuMs - (before[process]?.cpuMs ?? 0);
        }
      }
      const perCheck = (side: (typeof sides)[number]) => Object.fromEntries(Object.entries(side.cpuMs).map(([process, ms]) => [process, Math.round((ms / Math.max(1, side.samples.length)) * 1000) / 1000]));
      const sum = (cpu: Record<string, number>, names: readonly string[]) => Math.round(names.reduce((total, name) => total + (cpu[name] ?? 0), 0) * 1000) / 1000;
      const [large, small] = sides.map((side) => {
        const cpuMsPerCheck = perCheck(side);
        return { devices: side.devices, rate, ...summarize(side.samples), cpuMsPerCheck, servicesCpuMsPerCheck: sum(cpuMsPerCheck, OUR_SERVICES), storeCpuMsPerCheck: sum(cpuMsPerCheck, STORE_PROCESSES) };
      });
      // What the large fleet would cost polling every 5 minutes, at its CPU per check.
      const checksPerSecond = devices / 300;
      const checks = {
        ...large!,
        coresAtFiveMinutePolling: Object.fromEntries(Object.entries(large!.cpuMsPerCheck).map(([process, ms]) => [process, Math.round(((ms * checksPerSecond) / 1000) * 10) / 10])),
        reference: small!,
        servicesCpuRatioToReference: small!.servicesCpuMsPerCheck ? Math.round((large!.servicesCpuMsPerCheck / small!.servicesCpuMsPerCheck) * 100) / 100 : null,
        storeCpuRatioToReference: small!.storeCpuMsPerCheck ? Math.round((large!.storeCpuMsPerCheck / small!.storeCpuMsPerCheck) * 100) / 100 : null,
      };
      this.settings.log(`  checks of known devices, beside ${referenceDevices}: ${JSON.stringify(checks)}`);
      this.settings.log(`  cores for ${devices} devices polling every 5 minutes: ${JSON.stringify(checks.coresAtFiveMinutePolling)}`);
      return checks;
    } finally {
      await referenceGateway.close();
      await reference.stop();
    }
  }

  /**
   * s16's change of a group by a list of 1,000 devices (as the console's selection sends it): what
   * it would do to the rollouts, then the 1,000 added, then removed; each one request, timed, with
   * each process's CPU.
   */
  /**
   * s21: new devices checking in to owners that hold --held-places device places, written straight
   * into registry's store as the registrations of releases before left them (no record of the cap
   * they were taken under): one owner's cap is ten times that, and each device is registered; the
   * other's cap is what it holds, and each device is refused (`over_limit`) as a fleet larger than
   * its plan is at every check. The first check of each is reported on its own; the ones after it
   * are measured one at a time, as s16 measures a call.
   */
  private async cappedRegistration() {
    const held = this.settings.heldPlaces;
    const ownerHolding = async (cap: number, name: string) => {
      const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, name, cap);
      const { owner_id: ownerId } = (await this.gateway.api('GET', `/api/v1/projects/${fleet.projectId}/`, fleet.userToken)) as { owner_id: string };
      await seedDevicePlaces(this.stack, ownerId, held);
      return fleet;
    };
    const seedStarted = performance.now();
    const underCap = await ownerHolding(held * 10, 'capped registration');
    const atCap = await ownerHolding(held, 'registration at the cap');
    const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
    this.settings.log(`  seeded ${held} device places for each of two owners in ${seedSeconds} s`);
    await settleStore(this.stack.postgresUrl);
    const run = Date.now().toString(36);
    return {
      heldPlaces: held,
      seedSeconds,
      registrations: { cap: held * 10, ...(await this.newDeviceChecks(underCap, `capped-${run}`, 'registered')) },
      refusals: { cap: held, ...(await this.newDeviceChecks(atCap, `refused-${run}`, 'over_limit')) },
    };
  }

  /** s21's checks of new devices of one fleet: the first, then up to 20 one at a time, each expected registered or refused. */
  private async newDeviceChecks(fleet: Fleet, prefix: string, expected: 'registered' | 'over_limit') {
    let made = 0;
    const check = async () => {
      const started = performance.now();
      const answer = await this.gateway.post('/api/v1/ota/check/', fleet.deviceToken, checkBody(`${prefix}-${made++}`), true);
      const ms = Math.round(performance.now() - started);
      const refused = answer.body?.status === 'over_limit';
      const asExpected = answer.status === 200 && refused === (expected === 'over_limit');
      return { ms, error: asExpected ? '' : `${answer.status} ${answer.body?.status ?? ''}`.trim() };
    };
    const first = await check();
    this.settings.log(`  ${prefix}: first check ${JSON.stringify(first)}`);
    await this.settings.beforeStep?.();
    const before = usageOf(this.pids);
    const calls: Array<{ ms: number; error: string }> = [];
    const until = performance.now() + 60_000;
    while (calls.length < 20 && (calls.length < 3 || performance.now() < until)) calls.push(await check());
    const cpu = perRequest(before, usageOf(this.pids), calls.length);
    const sorted = calls.map((one) => one.ms).sort((a, b) => a - b);
    const result = {
      first,
      calls: calls.length,
      medianMs: quantile(sorted, 0.5),
      p95Ms: quantile(sorted, 0.95),
      errors: [...new Set(calls.filter((one) => one.error).map((one) => one.error))],
      cpuMsPerCall: Object.fromEntries(Object.entries(cpu).map(([process, usage]) => [process, usage.cpuMsPerRequest])),
      callsMs: calls.map((one) => one.ms),
    };
    this.settings.log(`  ${prefix}: ${JSON.stringify(result)}`);
    return result;
  }

  private async membershipChangesByIds(fleet: Fleet) {
    const project = (path: string) => `/api/v1/projects/${fleet.projectId}${path}`;
    const GIVE_UP_MS = 120_000;
    const call = (method: string, path: string, body?: unknown) => this.gateway.api(method, project(path), fleet.userToken, body, GIVE_UP_MS);
    // The bulk changes before leave the store's autovacuum work that would otherwise run during these.
    const settlingSeconds = await settleStore(this.stack.postgresUrl);
    const target = (await call('POST', '/groups/', { name: 'by-ids-target' })) as { id: string };
    const ids = ((await call('GET', '/devices/?limit=1000')) as Array<{ id: string }>).map((device) => device.id);
    const measured = async (name: string, path: string, body: unknown) => {
      const before = usageOf(this.pids);
      const started = performance.now();
      let error = '';
      let answer: unknown;
      try {
        answer = await call('POST', path, body);
      } catch (failure) {
        error = String((failure as Error).message).slice(0, 200);
      }
      const cpu = perRequest(before, usageOf(this.pids), 1);
      const result = {
        ms: Math.round(performance.now() - started),
        error,
        answer: name === 'impact' ? undefined : answer,
        cpuSeconds: Object.fromEntries(Object.entries(cpu).map(([process, usage]) => [process, Math.round(usage.cpuMsPerRequest / 100) / 10])),
      };
      this.settings.log(`  ${name} of ${ids.length} devices by id: ${JSON.stringify(result)}`);
      return result;
    };
    return {
      devices: ids.length,
      settlingSeconds,
      impact: await measured('impact', `/groups/${target.id}/members/changes/impact/`, { add: ids }),
      add: await measured('add', `/groups/${target.id}/members/changes/`, { add: ids }),
      remove: await measured('remove', `/groups/${target.id}/members/changes/`, { remove: ids }),
    };
  }

  /**
   * s16's bulk group changes: every member of a seeded group (a tenth of the fleet) added to a new
   * group as one operation, then every member of the new group removed, each followed as the console
   * follows it, from the request to its end, with each process's CPU and the audit events written.
   */
  private async bulkMembershipChanges(fleet: Fleet, seededGroupId: string) {
    const project = (path: string) => `/api/v1/projects/${fleet.projectId}${path}`;
    const call = (method: string, path: string, body?: unknown) => this.gateway.api(method, project(path), fleet.userToken, body);
    const target = (await call('POST', '/groups/', { name: 'bulk-target' })) as { id: string };
    const follow = async (action: 'add' | 'remove', matching: Record<string, unknown>) => {
      const before = usageOf(this.pids);
      const started = performance.now();
      let change = (await call('POST', `/groups/${target.id}/members/bulk-changes/`, { action, matching })) as Record<string, unknown> & { id: string; state: string; share_done: number };
      const firstAnswerMs = Math.round(performance.now() - started);
      const shares = new Set<number>([change.share_done]);
      const giveUpAt = performance.now() + 15 * 60_000;
      while (change.state === 'running' && performance.now() < giveUpAt) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        change = (await call('GET', `/groups/${target.id}/members/bulk-changes/${change.id}/`)) as typeof change;
        shares.add(change.share_done);
      }
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      const cpu = perRequest(before, usageOf(this.pids), 1);
      const result = {
        action,
        state: change.state,
        detail: change.detail,
        devicesExpected: change.devices_expected,
        devicesMatched: change.devices_matched,
        changed: action === 'add' ? change.added : change.removed,
        firstAnswerMs,
        seconds,
        progressSteps: shares.size,
        cpuSeconds: Object.fromEntries(Object.entries(cpu).map(([process, usage]) => [process, Math.round(usage.cpuMsPerRequest / 100) / 10])),
        id: change.id,
      };
      this.settings.log(`  bulk ${action}: ${JSON.stringify(result)}`);
      return result;
    };
    const add = await follow('add', { group_id: seededGroupId });
    const remove = await follow('remove', {});
    // Each change wrote one audit event (telemetry stores it a moment after the change ends).
    let auditEvents = 0;
    for (let attempt = 0; attempt < 30; attempt++) {
      const events = (await call('GET', '/audit/?action=group.members_changed&limit=50')) as Array<{ details: { change_id?: string } }>;
      auditEvents = events.filter((event) => event.details.change_id === add.id || event.details.change_id === remove.id).length;
      if (auditEvents >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return { add, remove, auditEvents };
  }

  /**
   * s17: the floor of our stack under a check (floor-server.ts), found the way s0 and s1 are, on
   * s1's devices and tokens; with s1 measured in the same run, our services' CPU per check against it.
   */
  private async stackFloor() {
    const floor = await startFloor(this.rootDir, this.stack, this.serverNodeArgs);
    // What each process spends with no request at all (timers, heartbeats): a share of every
    // check's CPU that falls as the rate rises, so the floor's and ours are set side by side.
    const idleCpuMsPerSecond = await idleCpuOf({ ...this.pids, ...floor.pids }, IDLE_MEASURE_MS);
    this.settings.log(`  idle, CPU ms a second: ${Object.entries(idleCpuMsPerSecond).map(([name, ms]) => `${name} ${ms}`).join(', ')}`);
    const result = await this.searchOtherServer('s17: the floor of our stack (Koa, one grpc-js hop, the driver)', floor);
    // CPU per request falls as the rate rises (what a process does each second is shared by more
    // requests), so s1 and the floor are set side by side at the rates both searches stepped at.
    const floorNames = Object.keys(floor.pids);
    const s1 = this.s1Result;
    const atSameRates = (s1?.steps ?? []).flatMap((s1Step) => {
      const floorStep = result.steps.find((step) => step.rate === s1Step.rate);
      if (!floorStep) return [];
      const [services, floorCpu] = [cpuMsPerCheckOf(s1Step.usage, OUR_SERVICES), cpuMsPerCheckOf(floorStep.usage, floorNames)];
      return [{ rate: s1Step.rate, s1ServicesCpuMsPerCheck: services, floorCpuMsPerCheck: floorCpu, servicesToFloor: floorCpu ? Math.round((services / floorCpu) * 100) / 100 : null }];
    });
    const floorCpuMsPerCheck = result.atMax ? cpuMsPerCheckOf(result.atMax.usage, floorNames) : null;
    // The headline: the highest rate both measured at which s1 held.
    const headline = atSameRates.filter((row) => s1?.steps.find((step) => step.rate === row.rate && step.rate <= s1.maxRate)).at(-1) ?? atSameRates.at(0);
    this.settings.log(`  the floor: ${floorCpuMsPerCheck} ms CPU per check at its highest rate ${result.maxRate}/s; at the same rates as s1: ${JSON.stringify(atSameRates)}`);
    // With s0 in the run, the floor's own ratio to it: what the libraries the design fixes allow s1.
    const againstS0 = this.baselineResult ? this.againstS0('s17', result, await this.baselineResult) : {};
    return { ...result, idleCpuMsPerSecond, floorCpuMsPerCheck, atSameRates, servicesToFloor: headline?.servicesToFloor ?? null, servicesToFloorRate: headline?.rate ?? null, s1MaxRate: s1?.maxRate ?? null, ...againstS0 };
  }

  /** A path's highest rate as a share of s0's in the same run, with the bounds both searches' brackets give; logged. */
  private againstS0(name: string, result: RateSearchResult, baseline: RateSearchResult) {
    const ratioToS0 = baseline.maxRate ? Math.round((result.maxRate / baseline.maxRate) * 100) / 100 : null;
    // The ratio of two held rates alone can be off by both searches' steps (up to 15% each).
    const ratioToS0Bounds = ratioBounds(result, baseline);
    this.settings.log(`  ${name} ${result.maxRate}/s against s0 ${baseline.maxRate}/s: ${ratioToS0} of s0, between ${ratioToS0Bounds.low ?? 'unknown'} and ${ratioToS0Bounds.high ?? 'unknown'} by the rates each held and missed`);
    return { ratioToS0, ratioToS0Bounds };
  }

  /**
   * s20: our services' CPU per check against the floor's, one step of each at a time at one rate.
   * s17 searches each side's rate in a stretch of its own, and this machine moved the floor's own
   * CPU per check by 0.3 ms between two such stretches: here each round sets the two side by side
   * within a minute or two, the order turned each round so that a drift weighs on both alike, and
   * the median round is the figure.
   */
  private async floorInTurns() {
    const fleet = await this.knownDevices();
    const floor = await startFloor(this.rootDir, this.stack, this.serverNodeArgs);
    const direct = new Gateway(floor.url);
    try {
      this.settings.log(`s20: our services and the floor in turns, ${this.settings.rounds} rounds at ${this.settings.startRate}/s`);
      await this.checkEachKnownDevice(direct, fleet);
      const sides = {
        ours: { pids: this.pids, names: OUR_SERVICES as readonly string[], send: (index: number) => this.checkKnown(fleet, index), sent: 0 },
        floor: {
          pids: { ...floor.pids, ...this.storePids() },
          names: Object.keys(floor.pids),
          send: (index: number) => this.checkKnownAt(direct, fleet, index),
          sent: 0,
        },
      };
      const rounds: Array<{ order: string[]; ours: Step; floor: Step; oursCpuMsPerCheck: number; floorCpuMsPerCheck: number; servicesToFloor: number | null }> = [];
      for (let round = 0; round < this.settings.rounds; round += 1) {
        const order = round % 2 === 0 ? (['ours', 'floor'] as const) : (['floor', 'ours'] as const);
        const steps: Partial<Record<'ours' | 'floor', Step>> = {};
        for (const name of order) {
          const side = sides[name];
          await this.settings.beforeStep?.();
          // A process that resumes after a minute without requests spends more per request for
          // its first several seconds: the step is measured after half a step of the same checks.
          const warmUp = await runOpenLoop({ phases: [{ rate: this.settings.startRate, durationMs: this.settings.stepMs / 2 }], send: (index) => side.send(side.sent + index) });
          side.sent += warmUp.length;
          const { step, sent } = await measureStep(this.settings.startRate, this.settings.stepMs, side.pids, side.send, side.sent, this.countStatements, name === 'ours' ? this.stack.metricsUrls : undefined, S20_SLICE_MS);
          side.sent += sent;
          steps[name] = step;
          // Let queues drain, as between the steps of a rate search.
          await sleep(1_000);
        }
        const [ours, floorCpu] = [cpuMsPerCheckOf(steps.ours!.usage, sides.ours.names), cpuMsPerCheckOf(steps.floor!.usage, sides.floor.names)];
        const servicesToFloor = floorCpu ? Math.round((ours / floorCpu) * 100) / 100 : null;
        rounds.push({ order: [...order], ours: steps.ours!, floor: steps.floor!, oursCpuMsPerCheck: ours, floorCpuMsPerCheck: floorCpu, servicesToFloor });
        this.settings.log(
          `  round ${round + 1}: ours ${ours} ms (p99 ${steps.ours!.latency.p99} ms), the floor ${floorCpu} ms (p99 ${steps.floor!.latency.p99} ms): ${servicesToFloor}`,
        );
      }
      const result = { rate: this.settings.startRate, rounds, ...mediansOfRounds(rounds) };
      this.settings.log(`  s20: our services against the floor, median of ${rounds.length} rounds: ${result.servicesToFloor} (${result.servicesToFloorRange?.join(' to ')})`);
      return result;
    } finally {
      await direct.close();
      await floor.stop();
    }
  }

  /**
   * s22: our services' CPU per check against the floor's, both served at the same time. In s20's
   * turns the machine itself moved a side's CPU per check by 20% from one step to the next (a
   * step's processes, ours and the floor's and the store's alike, spent more at some moments than
   * at others), so a round's ratio carried the machine's drift between its two steps. Here every
   * second of a round holds checks of both sides, one after the other, and each side's processes
   * are read over the same seconds: what the machine does to one it does to the other.
   */
  private async floorAtOnce() {
    const fleet = await this.knownDevices();
    const floor = await startFloor(this.rootDir, this.stack, this.serverNodeArgs);
    const direct = new Gateway(floor.url);
    try {
      const rate = this.settings.startRate;
      this.settings.log(`s22: our services and the floor at once, ${this.settings.rounds} rounds at ${rate}/s each`);
      await this.checkEachKnownDevice(direct, fleet);
      const floorNames = Object.keys(floor.pids);
      const pids = { ...this.pids, ...floor.pids };
      // Even requests are ours, odd ones the floor's: each side at `rate`, its devices in s20's order.
      let sent = 0;
      const send = (index: number) => {
        const [side, number] = [index % 2 === 0 ? 'ours' : 'floor', sent + Math.floor(index / 2)];
        const answer = side === 'ours' ? this.checkKnown(fleet, number) : this.checkKnownAt(direct, fleet, number);
        // A request that failed outright still counts for its side, as status 0.
        return answer.catch((): Outcome => ({ status: 0, retryAfter: false })).then((outcome) => ({ ...outcome, tag: side }));
      };
      const rounds: Array<{ ours: object; floor: object; oursCpuMsPerCheck: number; floorCpuMsPerCheck: number; servicesToFloor: number | null }> = [];
      for (let round = 0; round < this.settings.rounds; round += 1) {
        await this.settings.beforeStep?.();
        // Half a step unmeasured, as s20 warms each of its steps.
        const warmUp = await runOpenLoop({ phases: [{ rate: rate * 2, durationMs: this.settings.stepMs / 2 }], send });
        sent += Math.ceil(warmUp.length / 2);
        const before = usageOf(pids);
        const samples = await runOpenLoop({ phases: [{ rate: rate * 2, durationMs: this.settings.stepMs }], send });
        const after = usageOf(pids);
        sent += Math.ceil(samples.length / 2);
        const sideOf = (tag: string, names: readonly string[]) => {
          const answered = samples.filter((sample) => sample.tag === tag);
          const usage = perRequest(before, after, answered.length);
          const measured = answered.filter((sample) => sample.intendedAt >= this.settings.stepMs / 5);
          return { requests: answered.length, latency: summarize(measured), cpuMsPerCheck: cpuMsPerCheckOf(usage, names), usage: Object.fromEntries(names.map((name) => [name, usage[name]])) };
        };
        const [ours, floorSide] = [sideOf('ours', OUR_SERVICES), sideOf('floor', floorNames)];
        const servicesToFloor = floorSide.cpuMsPerCheck ? Math.round((ours.cpuMsPerCheck / floorSide.cpuMsPerCheck) * 100) / 100 : null;
        rounds.push({ ours, floor: floorSide, oursCpuMsPerCheck: ours.cpuMsPerCheck, floorCpuMsPerCheck: floorSide.cpuMsPerCheck, servicesToFloor });
        this.settings.log(`  round ${round + 1}: ours ${ours.cpuMsPerCheck} ms (p99 ${ours.latency.p99} ms), the floor ${floorSide.cpuMsPerCheck} ms (p99 ${floorSide.latency.p99} ms): ${servicesToFloor}`);
        await sleep(1_000);
      }
      const result = { rate, rounds, ...mediansOfRounds(rounds) };
      this.settings.log(`  s22: our services against the floor at once, median of ${rounds.length} rounds: ${result.servicesToFloor} (${result.servicesToFloorRange?.join(' to ')})`);
      return result;
    } finally {
      await direct.close();
      await floor.stop();
    }
  }

  /** One more gateway on this stack's services, with settings of its own. */
  private async extraGateway(settings: NodeJS.ProcessEnv) {
    const port = await freePort();
    const env = { ...this.stack.gatewayEnv, ...settings, GATEWAY_PORT: String(port), METRICS_PORT: String(await freePort()) };
    const process = startProcess('gateway-extra', globalThis.process.execPath, serviceArgsOf(this.rootDir, 'gateway'), env, { kind: 'prefixed' });
    await waitForPort('127.0.0.1', port, process, 60_000);
    const gateway = new Gateway(`http://127.0.0.1:${port}`);
    return {
      gateway,
      pid: process.child.pid!,
      stop: async () => {
        await gateway.close();
        await process.stop();
      },
    };
  }

  /** Previews a 50% deployment of the known fleet a few times, each alone, and cancels it after. */
  private async preview() {
    const fleet = await this.knownDevices();
    const { deploymentId } = await createDeployment(this.gateway, fleet, { version_label: 'preview' }, [fleet.defaultChannelId], 50);
    const path = `/api/v1/projects/${fleet.projectId}/deployments/${deploymentId}/`;
    const runs = 3;
    const durations: number[] = [];
    let preview: { device_count: number; outcomes: Record<string, { count: number }> } | undefined;
    const before = usageOf(this.pids);
    try {
      for (let run = 0; run < runs; run++) {
        const started = performance.now();
        preview = await this.gateway.api('GET', `${path}preview/`, fleet.userToken);
        durations.push(performance.now() - started);
        this.settings.log(`s10: preview of ${preview!.device_count} devices in ${Math.round(durations[run]!)} ms`);
      }
    } finally {
      // Cancelled so that later scenarios run without it; a failure here must not hide the preview's.
      await this.gateway.api('POST', `${path}transition/`, fleet.userToken, { action: 'cancel' }).catch((error: unknown) => this.settings.log(`s10: cancel failed: ${String(error)}`));
    }
    const previewMs = Math.round(quantile([...durations].sort((a, b) => a - b), 0.5));
    const previewTimeoutMs = Number(this.stack.gatewayEnv.PREVIEW_TIMEOUT_MS ?? 60_000);
    return {
      devices: preview!.device_count,
      runs,
      previewMs,
      microsecondsPerDevice: Math.round((previewMs * 1000) / Math.max(1, preview!.device_count)),
      shareOfPreviewDeadline: Math.round((previewMs / previewTimeoutMs) * 100) / 100,
      outcomes: Object.fromEntries(Object.entries(preview!.outcomes).map(([outcome, bucket]) => [outcome, bucket.count])),
      usage: perRequest(before, usageOf(this.pids), runs),
    };
  }

  private search(label: string, send: (index: number) => Promise<{ status: number; retryAfter: boolean }>): Promise<RateSearchResult> {
    this.settings.log(`${label}: searching the highest rate with p99 under ${P99_TARGET_MS} ms`);
    return highestRate({
      startRate: this.settings.startRate,
      stepMs: this.settings.stepMs,
      maxSteps: this.settings.maxSteps,
      confirmMisses: this.settings.confirmMisses,
      pids: this.pids,
      send,
      log: this.settings.log,
      countStatements: this.countStatements,
      beforeStep: this.settings.beforeStep,
      metricsUrls: this.stack.metricsUrls,
    });
  }

  private baseline(): Promise<RateSearchResult> {
    this.baselineResult ??= this.measureBaseline();
    return this.baselineResult;
  }

  private async measureBaseline(): Promise<RateSearchResult> {
    const server = await startBaseline(this.rootDir, this.stack, this.serverNodeArgs);
    return this.searchOtherServer('s0: the bare baseline', { url: server.url, pids: { baseline: server.process.pid! }, stop: () => server.stop() });
  }

  /** The highest rate a server other than the stack's gateway holds for s1's checks (its `/check`), and stops it after. */
  private async searchOtherServer(label: string, server: { url: string; pids: Record<string, number>; stop(): Promise<void> }): Promise<RateSearchResult> {
    const fleet = await this.knownDevices();
    const direct = new Gateway(server.url);
    try {
      this.settings.log(label);
      await this.checkEachKnownDevice(direct, fleet);
      return await highestRate({
        startRate: this.settings.startRate,
        stepMs: this.settings.stepMs,
        maxSteps: this.settings.maxSteps,
        confirmMisses: this.settings.confirmMisses,
        pids: { ...server.pids, ...this.storePids() },
        send: (index) => this.checkKnownAt(direct, fleet, index),
        log: this.settings.log,
        countStatements: this.countStatements,
        beforeStep: this.settings.beforeStep,
      });
    } finally {
      await direct.close();
      await server.stop();
    }
  }


  /**
   * Each known device checks once at a server other than the stack's gateway (s0's, the floor's)
   * before it is measured: s1's devices exist in registry before its search, and these servers'
   * first check of a device is an insert, not the update measured; it also compiles the server's
   * code, as s1's setup does the services'.
   */
  private checkEachKnownDevice(server: Gateway, fleet: Fleet) {
    return inParallel(this.settings.devices, 16, (index) => server.post('/check', fleet.deviceToken, checkBody(`known-${index}`)));
  }

  /** A known device's check at such a server's `/check`, as checkKnown sends it to the gateway. */
  private checkKnownAt(server: Gateway, fleet: Fleet, index: number) {
    return server.post('/check', fleet.deviceToken, checkBody(`known-${index % this.settings.devices}`));
  }

  private check(fleet: Fleet, deviceId: string, extra: Record<string, unknown> = {}) {
    return this.gateway.post('/api/v1/ota/check/', fleet.deviceToken, checkBody(deviceId, extra));
  }

  private checkKnown(fleet: Fleet, index: number) {
    return this.check(fleet, `known-${index % this.settings.devices}`);
  }

  private checkOffering(fleet: Fleet, index: number) {
    const device = index % this.settings.offerDevices;
    return this.check(fleet, `offer-${device}`, { board_id: BOARDS[device % 2] });
  }

  /** The fleet of s1: `devices` devices, registered by their first checks. */
  private knownDevices(): Promise<Fleet> {
    this.known ??= (async () => {
      const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'known devices');
      await this.register(fleet, this.settings.devices, (index) => this.check(fleet, `known-${index}`));
      await this.settle(fleet, this.settings.devices, (index) => this.check(fleet, `known-${index}`));
      return fleet;
    })();
    return this.known;
  }

  /** The fleet of s3: a deployment per board at 50% on the default channel, and a beta channel no device is on. */
  private offeringFleet() {
    this.offering ??= (async () => {
      const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'offering fleet');
      const beta = await this.gateway.api('POST', `/api/v1/projects/${fleet.projectId}/channels/`, fleet.userToken, { name: 'beta' });
      const deploymentIds: string[] = [];
      for (const board of BOARDS) {
        deploymentIds.push((await createDeployment(this.gateway, fleet, { version_label: `2.0-${board}`, board_id: board }, [fleet.defaultChannelId], 50)).deploymentId);
      }
      await this.register(fleet, this.settings.offerDevices, (index) => this.checkOffering(fleet, index));
      await this.settle(fleet, this.settings.offerDevices, (index) => this.checkOffering(fleet, index));
      return { fleet, deploymentIds, betaChannelId: beta.id as string };
    })();
    return this.offering;
  }

  /**
   * s18's fleet: s3's deployments (one per board at 50% on the default channel) with maintenance
   * windows open at every hour, caps far above any rate and the health guardrail; a commit that
   * refuses the caps or the guardrail (one from before them) gets the deployments without them,
   * and `features` says which the run had.
   */
  private guardedOfferingFleet() {
    this.guardedOffering ??= (async () => {
      const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'guarded offering fleet');
      const everyDay = { time_zone: 'UTC', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', duration_minutes: 1440 }] };
      const whole = { maintenance_windows: everyDay, caps: { offers_per_minute: 100_000, max_in_progress: 1_000_000_000 }, guardrails: { health_regression: {} } };
      let features = ['maintenance_windows', 'caps', 'health_regression'];
      for (const board of BOARDS) {
        const manifest = { version_label: `2.0-${board}`, board_id: board };
        await createDeployment(this.gateway, fleet, manifest, [fleet.defaultChannelId], 50, undefined, features.length === 3 ? whole : { maintenance_windows: everyDay }).catch(async (error: Error) => {
          if (!/ 422 /.test(error.message)) throw error;
          features = ['maintenance_windows'];
          this.settings.log('  s18: this commit refuses caps or the health guardrail: its deployments have maintenance windows only');
          return createDeployment(this.gateway, fleet, manifest, [fleet.defaultChannelId], 50, undefined, { maintenance_windows: everyDay });
        });
      }
      await this.register(fleet, this.settings.offerDevices, (index) => this.checkGuarded(fleet, index));
      await this.settle(fleet, this.settings.offerDevices, (index) => this.checkGuarded(fleet, index));
      return { fleet, features };
    })();
    return this.guardedOffering;
  }

  /**
   * s19's fleet: --devices devices, and a started deployment to a group none of them is in. A check
   * of one is decided not targeted, as s1's are for want of a deployment, after reading its
   * memberships where the release reads them.
   */
  private groupTargetedFleet() {
    this.groupTargeted ??= (async () => {
      const fleet = await createFleet(this.gateway, this.rootDir, this.stack.gatewayEnv, 'group-targeted fleet');
      const group = await this.gateway.api('POST', `/api/v1/projects/${fleet.projectId}/groups/`, fleet.userToken, { name: 'canary' });
      await createDeployment(this.gateway, fleet, { version_label: '2.0-canary' }, [], 100, undefined, { target_group_ids: [group.id] });
      const check = (index: number) => this.check(fleet, `grouped-${index}`);
      await this.register(fleet, this.settings.devices, check);
      await this.settle(fleet, this.settings.devices, check);
      return fleet;
    })();
    return this.groupTargeted;
  }

  /** s3's check, carrying the device's health (a build a day old, one boot) with uptime that grows with each check. */
  private checkGuarded(fleet: Fleet, index: number) {
    const device = index % this.settings.offerDevices;
    const round = Math.floor(index / this.settings.offerDevices);
    return this.check(fleet, `guarded-${device}`, {
      board_id: BOARDS[device % 2],
      health: { reset_reason: 'power_on', boots: 1, abnormal_boots: 0, uptime_seconds: 86_400 + round * 60, min_free_heap: 120_000 },
    });
  }

  /** The checks of --settled-checks: each device checks that many times more, as a fleet that has been polling for a while has. */
  private async settle(fleet: Fleet, count: number, check: (index: number) => Promise<{ status: number }>): Promise<void> {
    const rounds = this.settings.settledChecks;
    for (let round = 1; round <= rounds; round += 1) await this.register(fleet, count, check, `settling, check ${round + 1} of ${rounds + 1}`);
  }

  /** Every device of the fleet checks once, 32 at a time; `round` names it in the log. */
  private async register(fleet: Fleet, count: number, check: (index: number) => Promise<{ status: number }>, round = 'registered'): Promise<void> {
    const started = Date.now();
    let failed = 0;
    await inParallel(count, 32, async (index) => {
      if ((await check(index)).status !== 200) failed += 1;
      if (index > 0 && index % 5000 === 0) this.settings.log(`  ${round}: ${index}/${count} devices`);
    });
    if (failed > 0) throw new Error(`${round}: ${failed} of ${count} checks failed`);
    this.settings.log(`  ${round}: ${count} devices in ${((Date.now() - started) / 1000).toFixed(1)} s (fleet ${fleet.projectId})`);
  }

  /**
   * s4 and s5 report to a deployment of their own, so that its stored states come only from them.
   * It is active, as the deployments devices report on are, but targets the beta channel, which no
   * device is on, so that it offers nothing to s3's checks.
   */
  private statusDeployment() {
    this.statusTarget ??= this.offeringFleet().then(({ fleet, betaChannelId }) =>
      createDeployment(this.gateway, fleet, { version_label: '3.0' }, [betaChannelId], 100),
    );
    return this.statusTarget;
  }

  private expected = new Map<number, number>();

  private async report(fleet: Fleet, target: { deploymentId: string; buildNumber: number }, counter: number) {
    const device = counter % this.settings.offerDevices;
    const event = LIFECYCLE[Math.floor(counter / this.settings.offerDevices) % LIFECYCLE.length]!;
    const answer = await this.gateway.post(
      '/api/v1/ota/status/',
      fleet.deviceToken,
      { device_id: `offer-${device}`, deployment_id: target.deploymentId, event, build_number: target.buildNumber },
      true,
    );
    if (answer.status === 200 && answer.body?.accepted) this.expected.set(device, Math.max(this.expected.get(device) ?? -1, LIFECYCLE.indexOf(event)));
    return answer;
  }

  private async statusIngestion() {
    const { fleet } = await this.offeringFleet();
    const target = await this.statusDeployment();
    const result = await this.search('s4', () => this.report(fleet, target, this.statusCounter++));
    // Every event answered accepted: true must be stored: each device's state is the highest of them.
    const devices = (await this.gateway.api('GET', `/api/v1/projects/${fleet.projectId}/devices/`, fleet.userToken)) as Array<{ id: string; device_id: string }>;
    const states = (await this.gateway.api('GET', `/api/v1/projects/${fleet.projectId}/deployments/${target.deploymentId}/states/`, fleet.userToken)) as Array<{
      device_id: string;
      status: string;
    }>;
    const stored = new Map(states.map((state) => [state.device_id, state.status]));
    let lost = 0;
    for (const device of devices) {
      const index = Number(device.device_id.replace('offer-', ''));
      const highest = this.expected.get(index);
      if (highest !== undefined && stored.get(device.id) !== LIFECYCLE[highest]) lost += 1;
    }
    this.settings.log(`  accepted events checked against stored states for ${this.expected.size} devices: ${lost} missing`);
    return { ...result, acceptedDevicesChecked: this.expected.size, acceptedButNotStored: lost };
  }

  private async wakeStorm() {
    const fleet = await this.knownDevices();
    const steady = Math.max(10, Math.round((this.knownMaxRate || this.settings.startRate * 2) / 2));
    const calm = this.settings.smoke ? 2_000 : 10_000;
    const after = this.settings.smoke ? 3_000 : 20_000;
    this.settings.log(`s6: ${steady}/s for ${calm / 1000} s, ${steady * 10}/s for ${this.settings.stormMs / 1000} s, ${steady}/s for ${after / 1000} s`);
    const before = usageOf(this.pids);
    const samples = await runOpenLoop({
      phases: [
        { rate: steady, durationMs: calm },
        { rate: steady * 10, durationMs: this.settings.stormMs },
        { rate: steady, durationMs: after },
      ],
      send: (index) => this.checkKnown(fleet, index),
      maxInFlight: 20_000,
    });
    const usage = perRequest(before, usageOf(this.pids), samples.length);
    const stormEnd = calm + this.settings.stormMs;
    const phase = (from: number, to: number) => summarize(samples.filter((sample) => sample.intendedAt >= from && sample.intendedAt < to));
    const normalP99 = phase(calm / 5, calm).p99;
    // Seconds after the storm until every later one-second window has its p99 back under the target
    // (or under twice the calm p99, when that is higher).
    const limit = Math.max(P99_TARGET_MS, normalP99 * 2);
    const windows: Array<{ second: number; p99: number }> = [];
    for (let from = stormEnd; from < stormEnd + after; from += 1_000) {
      const latencies = samples.filter((sample) => sample.intendedAt >= from && sample.intendedAt < from + 1_000).map((sample) => sample.latencyMs).sort((a, b) => a - b);
      windows.push({ second: (from - stormEnd) / 1000, p99: Math.round(quantile(latencies, 0.99) * 10) / 10 });
    }
    const lastBad = [...windows].reverse().find((window) => !(window.p99 <= limit));
    const recoverySeconds = lastBad === undefined ? 0 : lastBad.second + 1;
    const storm = phase(calm, stormEnd);
    const unexpectedErrors = Object.entries(storm.errors)
      .filter(([status]) => status !== '429' && status !== '503')
      .reduce((sum, [, count]) => sum + count, 0);
    const shedWithoutRetryAfter = (storm.errors['429'] ?? 0) + (storm.errors['503'] ?? 0) - storm.shedWithRetryAfter;
    this.settings.log(
      `  storm: p99 ${storm.p99} ms, errors ${JSON.stringify(storm.errors)} (${storm.shedWithRetryAfter} shed with Retry-After); p99 back under ${limit} ms ${recoverySeconds} s after`,
    );
    return {
      steadyRate: steady,
      stormRate: steady * 10,
      stormSeconds: this.settings.stormMs / 1000,
      calm: phase(calm / 5, calm),
      storm,
      after: phase(stormEnd, stormEnd + after),
      unexpectedErrors: unexpectedErrors + shedWithoutRetryAfter,
      recoverySeconds,
      windowsAfter: windows,
      usage,
    };
  }

  private async propagation() {
    const { fleet, deploymentIds } = await this.offeringFleet();
    const paused = deploymentIds[0]!;
    const rate = Math.max(10, Math.round((this.offerMaxRate || this.settings.startRate * 2) / 2));
    const durationMs = this.settings.smoke ? 3_000 : 10_000;
    this.settings.log(`s9: checks at ${rate}/s; deployment ${paused} paused half-way`);
    let pausedAt = Number.POSITIVE_INFINITY;
    const started = performance.now();
    const pausing = sleep(durationMs / 2).then(async () => {
      await this.gateway.api('POST', `/api/v1/projects/${fleet.projectId}/deployments/${paused}/transition/`, fleet.userToken, { action: 'pause' });
      pausedAt = performance.now() - started;
    });
    const samples = await runOpenLoop({
      phases: [{ rate, durationMs }],
      send: async (index) => {
        const device = index % this.settings.offerDevices;
        const answer = await this.gateway.post('/api/v1/ota/check/', fleet.deviceToken, checkBody(`offer-${device}`, { board_id: BOARDS[device % 2] }), true);
        return { status: answer.status, retryAfter: answer.retryAfter, tag: answer.body?.deployment_id ?? '' };
      },
    });
    await pausing;
    await this.gateway.api('POST', `/api/v1/projects/${fleet.projectId}/deployments/${paused}/transition/`, fleet.userToken, { action: 'resume' });
    // Checks sent after the pause was acknowledged that still offered the deployment.
    const late = samples.filter((sample) => sample.intendedAt >= pausedAt && sample.tag === paused);
    const offeredBefore = samples.filter((sample) => sample.intendedAt < pausedAt && sample.tag === paused).length;
    const propagationMs = late.length === 0 ? 0 : Math.round(Math.max(...late.map((sample) => sample.intendedAt + sample.latencyMs)) - pausedAt);
    this.settings.log(`  ${offeredBefore} offers before the pause; ${late.length} after it; every check honoured the pause within ${propagationMs} ms`);
    return { rate, latency: summarize(samples), offersBeforePause: offeredBefore, offersAfterPause: late.length, propagationMs };
  }
}

function sorted(record: Record<string, number>): Array<[string, number]> {
  return Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
}

function checkBody(deviceId: string, extra: Record<string, unknown> = {}) {
  return { device_id: deviceId, framework: FRAMEWORK, chip_family: CHIP, current_build_number: 0, version_label: '1.0.0', ...extra };
}
