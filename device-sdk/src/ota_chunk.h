/* The download's chunk arithmetic, apart so that the unit suite can reach its edges (an image of
 * nearly 4 GiB) without a slot that large. Not part of the SDK's interface. */
#ifndef OTA_CHUNK_H
#define OTA_CHUNK_H

#include <stdint.h>

/* Where the chunk that holds byte `received` ends: the next multiple of `chunk` above it, or
 * `size` when that comes first. Computed in 64 bits: within one chunk of 4 GiB the multiple does
 * not fit 32. */
uint32_t ota_chunk_end(uint32_t received, uint32_t chunk, uint32_t size);

#endif
