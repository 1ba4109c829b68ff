import type { Schemas } from './client';

/** What a build's ESP-IDF image says of itself, in one phrase (docs/api.md, "The image"). */
export function imageSummary(artifact: Pick<Schemas['Artifact'], 'image' | 'secure_version_raise'>): string {
  const image = artifact.image;
  if (!image) return 'not an ESP-IDF image';
  const unbounded = image.max_chip_revision === 0 || image.max_chip_revision === 65535;
  const revisions = `${revision(image.min_chip_revision)}${unbounded ? '+' : `-${revision(image.max_chip_revision)}`}`;
  const raise = artifact.secure_version_raise;
  return `${image.chip} ${revisions}, secure version ${image.secure_version}${raise ? ` (raises it from ${raise.from}, ${raise.efuse_bits_left} eFuse raises left)` : ''}`;
}

function revision(value: number): string {
  return `v${Math.floor(value / 100)}.${value % 100}`;
}
