/*
 * A small maker of delta patches for the unit suite, written from the format's description
 * (src/ota_delta.c's header comment), not from detools: one diff segment over the bytes the two
 * images share in length, one extra segment for the rest, compressed with heatshrink (window 2^8,
 * lookahead 2^7) using only literals and runs (a back-reference of distance 1), which is enough
 * for the mostly-zero diff of two similar images. The interoperability with detools itself is
 * test/delta.test.ts's.
 */
#include "patch_maker.h"

#include <string.h>

typedef struct {
    uint8_t *out;
    size_t cap, len;
    uint8_t bits;  /* bits of the byte in progress */
    uint8_t count; /* how many */
    int overflow;
} bit_writer_t;

static void put_byte(bit_writer_t *w, uint8_t byte) {
    if (w->len == w->cap) {
        w->overflow = 1;
        return;
    }
    w->out[w->len++] = byte;
}

static void put_bits(bit_writer_t *w, unsigned value, unsigned count) {
    while (count-- > 0) {
        w->bits = (uint8_t)((w->bits << 1) | ((value >> count) & 1u));
        if (++w->count == 8) {
            put_byte(w, w->bits);
            w->bits = 0;
            w->count = 0;
        }
    }
}

/* A detools size: 6 bits, sign and "more" in the first byte, then 7 bits and "more" per byte. */
static size_t size_bytes(uint64_t value, uint8_t out[10]) {
    size_t n = 0;
    out[n] = (uint8_t)(value & 0x3fu);
    value >>= 6;
    while (value) {
        out[n++] |= 0x80u;
        out[n] = (uint8_t)(value & 0x7fu);
        value >>= 7;
    }
    return n + 1;
}

/* The decompressed stream, one byte at a time, heatshrink-encoded as it goes. */
typedef struct {
    bit_writer_t *w;
    int has_last;
    uint8_t last;
    uint8_t run_byte;
    unsigned run; /* bytes equal to `last` waiting to go out as one back-reference */
} stream_t;

static void flush_run(stream_t *s) {
    if (s->run == 0) return;
    put_bits(s->w, 0, 1);
    put_bits(s->w, 0, 8); /* distance 1 */
    put_bits(s->w, s->run - 1, 7);
    s->run = 0;
}

static void stream_byte(stream_t *s, uint8_t byte) {
    if (s->has_last && byte == s->last) {
        if (++s->run == 128) flush_run(s);
        return;
    }
    flush_run(s);
    put_bits(s->w, 1, 1);
    put_bits(s->w, byte, 8);
    s->has_last = 1;
    s->last = byte;
}

static void stream_size(stream_t *s, uint64_t value) {
    uint8_t bytes[10];
    size_t n = size_bytes(value, bytes);
    for (size_t i = 0; i < n; i++) stream_byte(s, bytes[i]);
}

size_t make_patch(const uint8_t *base, size_t base_len, const uint8_t *target, size_t target_len, uint8_t *out, size_t cap) {
    bit_writer_t w = {.out = out, .cap = cap};
    put_byte(&w, 0x04); /* a sequential patch, heatshrink */
    uint8_t bytes[10];
    size_t n = size_bytes(target_len, bytes);
    for (size_t i = 0; i < n; i++) put_byte(&w, bytes[i]);
    put_byte(&w, ((8 - 4) << 4) | (7 - 3));
    stream_t s = {.w = &w};
    size_t diff = base_len < target_len ? base_len : target_len;
    stream_size(&s, 0); /* no data-format patch */
    stream_size(&s, diff);
    for (size_t i = 0; i < diff; i++) stream_byte(&s, (uint8_t)(target[i] - base[i]));
    stream_size(&s, target_len - diff);
    for (size_t i = diff; i < target_len; i++) stream_byte(&s, target[i]);
    stream_size(&s, 0); /* no adjustment */
    flush_run(&s);
    if (w.count) put_bits(&w, 0, 8u - w.count);
    return w.overflow ? 0 : w.len;
}
