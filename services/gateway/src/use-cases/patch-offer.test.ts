import type { artifacts } from '@ota/proto';
import { patchOfferOf, type PatchOfferPorts } from './patch-offer';

const call = { requestId: 'test' };
const NOW = new Date('2027-03-01T12:00:00Z');
const RUNNING = 'a'.repeat(64);
const FORMAT = 'detools-sequential-heatshrink-8-7';
const build = { artifactId: 'target', fileSize: 1_000_000, checksumSha256: 'b'.repeat(64) };

/** Ports whose artifacts service answers `patches` by format. */
function ports(patches: Record<string, Partial<artifacts.Patch>>, patchOfferWaitSeconds = 60): PatchOfferPorts {
  return {
    patchOfferWaitSeconds,
    now: () => NOW,
    artifacts: {
      patchForOffer: async (request: artifacts.PatchForOfferRequest) => ({ patch: patches[request.format] as artifacts.Patch | undefined }),
    } as unknown as PatchOfferPorts['artifacts'],
  };
}
const secondsAgo = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);
const capable = { projectId: 'p', build, currentHash: RUNNING, deltaFormats: [FORMAT] };

test('a ready patch smaller than the build is offered; one as large as the build is not', async () => {
  expect(await patchOfferOf(ports({ [FORMAT]: { state: 'ready', size: 20_000, createdAt: secondsAgo(5) } }), capable, call)).toMatchObject({ kind: 'patch', baseSha256: RUNNING });
  expect(await patchOfferOf(ports({ [FORMAT]: { state: 'ready', size: 1_000_000, createdAt: secondsAgo(5) } }), capable, call)).toEqual({ kind: 'full' });
});

test('a patch asked for moments ago makes the device wait until the bound, never past it', async () => {
  for (const state of ['queued', 'building']) {
    expect(await patchOfferOf(ports({ [FORMAT]: { state, createdAt: secondsAgo(10) } }), capable, call)).toEqual({ kind: 'wait', until: new Date(NOW.getTime() + 50_000) });
    // Asked for longer ago than the bound: the device gets the whole build now.
    expect(await patchOfferOf(ports({ [FORMAT]: { state, createdAt: secondsAgo(60) } }), capable, call)).toEqual({ kind: 'full' });
  }
  expect(await patchOfferOf(ports({ [FORMAT]: { state: 'failed', createdAt: secondsAgo(1) } }), capable, call)).toEqual({ kind: 'full' });
  // PATCH_OFFER_WAIT_SECONDS 0 never waits.
  expect(await patchOfferOf(ports({ [FORMAT]: { state: 'queued', createdAt: NOW } }, 0), capable, call)).toEqual({ kind: 'full' });
});

test('a ready patch in a later format wins over one still being made', async () => {
  const answer = await patchOfferOf(ports({ first: { state: 'queued', createdAt: secondsAgo(1) }, second: { state: 'ready', size: 10, createdAt: secondsAgo(1) } }), { ...capable, deltaFormats: ['first', 'second'] }, call);
  expect(answer).toMatchObject({ kind: 'patch', patch: { size: 10 } });
});

test('without the capability, with an image no build has, or already on the build, the whole build is offered', async () => {
  const making = ports({ [FORMAT]: { state: 'queued', createdAt: NOW } });
  for (const request of [
    { ...capable, deltaFormats: [] },
    { ...capable, deltaFormats: undefined },
    { ...capable, currentHash: undefined },
    { ...capable, currentHash: 'not-a-hash' },
    { ...capable, currentHash: build.checksumSha256.toUpperCase() },
  ]) {
    expect(await patchOfferOf(making, request, call)).toEqual({ kind: 'full' });
  }
  expect(await patchOfferOf(ports({}), capable, call)).toEqual({ kind: 'full' });
});
