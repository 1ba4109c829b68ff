/** How a device's image came, from the `detail` of its `downloaded` report (docs/api.md, "Delta patches"). */
export interface Download {
  how: 'image' | 'patch' | 'fell_back';
  /** The patch's bytes, when one was applied. */
  patchBytes: number;
  /** Why a patch was given up, when one was. */
  failure: string;
}

/** Larger than any image a patch is made for (PATCH_MAX_IMAGE_BYTES is 16 MiB): a device claiming more is not believed. */
const MAX_BELIEVED_PATCH_BYTES = 2 ** 32;

/** Reads a `downloaded` report's detail; anything else a device sends there is an image downloaded whole. */
export function downloadOf(detailJson: string): Download {
  let detail: unknown;
  try {
    detail = JSON.parse(detailJson || '{}');
  } catch {
    detail = {};
  }
  const { delta, patch_bytes: patchBytes, delta_failure: failure } = (detail && typeof detail === 'object' ? detail : {}) as Record<string, unknown>;
  if (delta === 'applied') {
    const believable = Number.isSafeInteger(patchBytes) && (patchBytes as number) > 0 && (patchBytes as number) < MAX_BELIEVED_PATCH_BYTES;
    return { how: 'patch', patchBytes: believable ? (patchBytes as number) : 0, failure: '' };
  }
  if (delta === 'fell_back') return { how: 'fell_back', patchBytes: 0, failure: typeof failure === 'string' ? failure : '' };
  return { how: 'image', patchBytes: 0, failure: '' };
}

/** The downloads devices reported for one deployment, or for every deployment of one build, by how they came. */
export interface DownloadCounts {
  /** Images made from a delta patch. */
  patched: number;
  /** Images downloaded whole, without trying a patch. */
  whole: number;
  /** Images downloaded whole after a patch was given up. */
  fellBack: number;
  /** The bytes of the patches applied, as the devices reported them. */
  patchBytes: number;
}
