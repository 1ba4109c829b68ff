/* Delta patches for the unit suite (patch_maker.c). */
#ifndef PATCH_MAKER_H
#define PATCH_MAKER_H

#include <stddef.h>
#include <stdint.h>

/* Writes a patch from `base` to `target` into out; its length, or 0 when it does not fit in cap. */
size_t make_patch(const uint8_t *base, size_t base_len, const uint8_t *target, size_t target_len, uint8_t *out, size_t cap);

#endif
