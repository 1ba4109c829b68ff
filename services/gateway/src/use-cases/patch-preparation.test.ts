import type { artifacts, registry } from '@ota/proto';
import { preparePatches, type PatchPreparationPorts } from './patch-preparation';

const call = { requestId: 'test' };

/** Ports whose registry reports `images` (most-run first) and whose artifacts know `knownBases` as builds. */
function ports(images: Array<[string, number]>, knownBases: string[], patchBasesPerBuild: number) {
  const asked: string[] = [];
  const fake: PatchPreparationPorts = {
    patchBasesPerBuild,
    registry: {
      countCurrentImages: async () => ({ images: images.map(([sha256, devices]) => ({ sha256, devices })) as registry.ImageCount[] }),
    } as unknown as PatchPreparationPorts['registry'],
    artifacts: {
      patchForOffer: async (request: artifacts.PatchForOfferRequest) => {
        asked.push(request.baseSha256);
        return { patch: knownBases.includes(request.baseSha256) ? ({ state: 'queued' } as artifacts.Patch) : undefined };
      },
    } as unknown as PatchPreparationPorts['artifacts'],
  };
  return { fake, asked };
}

test('a started build gets patches from the most-run images that are builds of the project, up to the limit', async () => {
  const { fake, asked } = ports([['a', 500], ['unknown', 300], ['b', 200], ['c', 100]], ['a', 'b', 'c'], 2);
  expect(await preparePatches(fake, { projectId: 'p', artifactId: 'new' }, call)).toBe(2);
  // An image that is no build of the project takes no place of the two.
  expect(asked).toEqual(['a', 'unknown', 'b']);
});

test('with PATCH_BASES_PER_BUILD 0 nothing is asked', async () => {
  const { fake, asked } = ports([['a', 5]], ['a'], 0);
  expect(await preparePatches(fake, { projectId: 'p', artifactId: 'new' }, call)).toBe(0);
  expect(asked).toEqual([]);
});
