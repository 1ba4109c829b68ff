/*
 * Applies a delta patch as a stream: the patch format that ESP-IDF's esp_delta_ota applies, a
 * detools "sequential" patch (bsdiff's diff, extra and adjustment segments) compressed with
 * heatshrink (window 2^8, lookahead 2^7 as the service makes them; any window up to 2^8 and any
 * lookahead below it are read). The patch is fed in pieces of any size; the new image comes out
 * through `write`, in order, and the base image (the running slot) is read through `read_base`.
 *
 * No allocation: the state is this struct (OTA_DELTA_STATE_BYTES, the heatshrink window and two
 * buffers). ota_delta_save writes it in a fixed little-endian layout, the same on every ABI; saved
 * with the count of patch bytes consumed, ota_delta_load resumes the apply from exactly there after
 * a power cut (feed the patch again from that count).
 *
 * Pauses: with io.pause_every set, the apply stops each time the new image written reaches a
 * multiple of it (OTA_DELTA_PAUSED), whatever the patch bytes are doing there: mid-byte, mid-copy.
 * A state saved at a pause resumes with the output at exactly that multiple, which is what flash
 * needs: a slot resumed at a sector boundary erases that sector before it writes it again, while a
 * resume inside a sector would write over bytes a cut left behind.
 *
 * What it refuses (OTA_DELTA_ERROR, with ota_delta_error() saying why): another patch type or
 * compression, a data-format patch (detools' --data-format: esp_delta_ota does not apply them
 * either), a window over 2^8, a segment past the new image's size, a base read outside the base,
 * and bytes past the end of the patch.
 */
#ifndef OTA_DELTA_H
#define OTA_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest heatshrink window read: 2^8 bytes, what esp_delta_ota's patches use. */
#define OTA_DELTA_WINDOW_BYTES 256u
/* Bytes of new image gathered before one base read and one write. */
#define OTA_DELTA_BUFFER_BYTES 256u

typedef enum {
    OTA_DELTA_MORE = 0,  /* fed: give the next bytes of the patch */
    OTA_DELTA_DONE = 1,  /* the whole new image was written */
    OTA_DELTA_ERROR = 2, /* refused; ota_delta_error() says why */
    OTA_DELTA_PAUSED = 3, /* the new image written reached a multiple of io.pause_every: save, then feed on */
} ota_delta_result_t;

typedef struct {
    void *ctx;
    /* Reads `len` bytes of the base image at `offset`; false when it cannot (past its end, a read error). */
    bool (*read_base)(void *ctx, uint32_t offset, uint8_t *out, size_t len);
    /* Writes the next `len` bytes of the new image; false fails the apply. */
    bool (*write)(void *ctx, const uint8_t *data, size_t len);
    /* The base image's size: reads beyond it are refused. */
    uint32_t base_size;
    /* Pause each time the new image written reaches a multiple of this many bytes (a multiple of
     * OTA_DELTA_BUFFER_BYTES); 0: never. */
    uint32_t pause_every;
} ota_delta_io_t;

typedef struct {
    /* Where the detools stream stands. */
    uint8_t phase;
    uint8_t varint_shift;
    bool varint_negative;
    uint64_t varint_value;
    uint32_t to_size;          /* the new image's size, from the header */
    uint32_t to_pos;           /* bytes of the new image produced (written or buffered) */
    uint32_t segment_left;     /* bytes left of the current diff or extra segment */
    int64_t from_pos;          /* where the next diff byte adds to the base */
    /* The heatshrink decoder. */
    uint8_t window_bits;
    uint8_t lookahead_bits;
    uint8_t hs_state;
    uint8_t field_bits_left;   /* bits still to read of the field in progress */
    uint16_t field_value;
    uint16_t backref_index;
    uint16_t copy_left;        /* bytes of a back-reference still to copy (a pause came inside it) */
    uint16_t copy_distance;
    uint8_t input_byte;        /* the patch byte whose bits are being read */
    uint8_t input_bits_left;   /* its bits not yet read (a pause came inside it) */
    bool pausing;              /* a pause point was reached: unwind (never saved) */
    uint32_t window_fill;      /* output bytes so far (the window holds the last 2^window_bits) */
    uint8_t window[OTA_DELTA_WINDOW_BYTES];
    /* New image bytes gathered for one write; for diff bytes, before the base is added. */
    uint8_t buffer[OTA_DELTA_BUFFER_BYTES];
    uint16_t buffered;
    bool buffered_is_diff;
    uint32_t buffered_from;    /* the base offset of the first buffered diff byte */
    uint8_t error;             /* why it was refused (a code: the state holds no pointer) */
} ota_delta_t;

#define OTA_DELTA_STATE_BYTES sizeof(ota_delta_t)
/* The saved form's size: version 1 of the layout, field by field (src/ota_delta.c). */
#define OTA_DELTA_SAVED_BYTES 570u

void ota_delta_init(ota_delta_t *delta);

/*
 * Feeds the next `len` bytes of the patch; *consumed says how many it took: all of them, unless it
 * paused (OTA_DELTA_PAUSED), when the rest is fed by the next call. A byte it paused inside counts
 * as taken: its remaining bits are in the state. After OTA_DELTA_DONE or OTA_DELTA_ERROR it takes
 * nothing more.
 */
ota_delta_result_t ota_delta_feed(ota_delta_t *delta, const uint8_t *patch, size_t len, const ota_delta_io_t *io, size_t *consumed);

/* The new image's size once the header was read; 0 before. */
uint32_t ota_delta_target_size(const ota_delta_t *delta);

/* Bytes of the new image handed to `write` so far: where the slot stands for this state. */
uint32_t ota_delta_written(const ota_delta_t *delta);

/* Writes the state in its saved form. */
void ota_delta_save(const ota_delta_t *delta, uint8_t out[OTA_DELTA_SAVED_BYTES]);

/* Reads a saved state; false (and `delta` as ota_delta_init leaves it) for one of another layout or out of range. */
bool ota_delta_load(ota_delta_t *delta, const uint8_t in[OTA_DELTA_SAVED_BYTES]);

/* Why the apply was refused; "" when it was not. */
const char *ota_delta_error(const ota_delta_t *delta);

#ifdef __cplusplus
}
#endif

#endif
