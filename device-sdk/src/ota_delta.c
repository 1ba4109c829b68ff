/*
 * The delta patch applier (ota_delta.h). Two machines in one struct: a heatshrink decoder that
 * turns patch bits into bytes, and a detools "sequential" reader that turns those bytes into the
 * new image. Both advance one bit or one byte at a time, so any cut of the input leaves a state
 * that goes on from the next byte.
 *
 * The patch: one byte of type (bits 6..4: 0, sequential) and compression (bits 3..0: 4,
 * heatshrink); the new image's size as a detools size; one heatshrink byte (window bits - 4 in the
 * high nibble, lookahead bits - 3 in the low one); then the heatshrink stream. Decompressed: the
 * data-format patch's size (0 here), then, until the new image is complete, a diff segment (its
 * size, then bytes added to the base's bytes), an extra segment (its size, then bytes as they
 * are) and an adjustment of the base position (a signed size).
 *
 * A detools size: the first byte holds 6 bits of value, bit 6 the sign and bit 7 "more"; each next
 * byte 7 bits of value (the next higher ones) and bit 7 "more". A heatshrink item: a 1 bit and 8
 * bits of literal byte, or a 0 bit, window-bits bits of (distance - 1) and lookahead-bits bits of
 * (count - 1), copying count bytes from that far back in the output, where the bytes before the
 * first are zeros (the window starts zeroed, and the compressor may refer to it). Bits come most
 * significant first.
 */
#include "ota/ota_delta.h"

#include <string.h>

enum {
    PHASE_TYPE,
    PHASE_TO_SIZE,
    PHASE_HEATSHRINK,
    PHASE_DATA_FORMAT_SIZE,
    PHASE_DIFF_SIZE,
    PHASE_DIFF,
    PHASE_EXTRA_SIZE,
    PHASE_EXTRA,
    PHASE_ADJUSTMENT,
    PHASE_DONE,
    PHASE_FAILED,
};

enum { HS_TAG, HS_LITERAL, HS_INDEX, HS_COUNT };

enum {
    ERR_NONE,
    ERR_TYPE,
    ERR_COMPRESSION,
    ERR_WINDOW,
    ERR_SIZE,
    ERR_DATA_FORMAT,
    ERR_SEGMENT,
    ERR_BASE,
    ERR_WRITE,
    ERR_TRAILING,
};

static const char *const ERRORS[] = {
    [ERR_NONE] = "",
    [ERR_TYPE] = "not a sequential patch",
    [ERR_COMPRESSION] = "not compressed with heatshrink",
    [ERR_WINDOW] = "a heatshrink window over 2^8 or a lookahead not below it",
    [ERR_SIZE] = "a size that does not fit",
    [ERR_DATA_FORMAT] = "a data-format patch (not applied)",
    [ERR_SEGMENT] = "a segment past the new image's size",
    [ERR_BASE] = "a read outside the base image",
    [ERR_WRITE] = "the new image could not be written",
    [ERR_TRAILING] = "bytes past the end of the patch",
};

#define PATCH_TYPE_SEQUENTIAL 0u
#define COMPRESSION_HEATSHRINK 4u

static ota_delta_result_t refuse(ota_delta_t *d, uint8_t error) {
    d->error = error;
    d->phase = PHASE_FAILED;
    return OTA_DELTA_ERROR;
}

void ota_delta_init(ota_delta_t *delta) {
    memset(delta, 0, sizeof *delta);
    delta->phase = PHASE_TYPE;
}

uint32_t ota_delta_target_size(const ota_delta_t *delta) {
    return delta->phase > PHASE_TO_SIZE ? delta->to_size : 0;
}

uint32_t ota_delta_written(const ota_delta_t *delta) {
    return delta->to_pos - delta->buffered;
}

const char *ota_delta_error(const ota_delta_t *delta) {
    return delta->error < sizeof ERRORS / sizeof ERRORS[0] ? ERRORS[delta->error] : "unknown";
}

/* ---- the new image: gathered, the base added to diff bytes, written ---- */

static bool flush(ota_delta_t *d, const ota_delta_io_t *io) {
    if (d->buffered == 0) return true;
    if (d->buffered_is_diff) {
        uint8_t base[OTA_DELTA_BUFFER_BYTES];
        if ((uint64_t)d->buffered_from + d->buffered > io->base_size || !io->read_base(io->ctx, d->buffered_from, base, d->buffered)) {
            d->error = ERR_BASE;
            return false;
        }
        for (uint16_t i = 0; i < d->buffered; i++) d->buffer[i] = (uint8_t)(d->buffer[i] + base[i]);
    }
    if (!io->write(io->ctx, d->buffer, d->buffered)) {
        d->error = ERR_WRITE;
        return false;
    }
    d->buffered = 0;
    return true;
}

/* One byte of the new image: a diff byte (the base's byte at from_pos is added) or an extra byte. */
static bool produce(ota_delta_t *d, uint8_t byte, bool is_diff, const ota_delta_io_t *io) {
    bool continues = d->buffered > 0 && d->buffered_is_diff == is_diff && (!is_diff || d->buffered_from + d->buffered == (uint64_t)d->from_pos);
    if (d->buffered == OTA_DELTA_BUFFER_BYTES || (d->buffered > 0 && !continues)) {
        if (!flush(d, io)) return false;
    }
    if (d->buffered == 0) {
        d->buffered_is_diff = is_diff;
        d->buffered_from = is_diff ? (uint32_t)d->from_pos : 0;
    }
    d->buffer[d->buffered++] = byte;
    d->to_pos++;
    if (is_diff) d->from_pos++;
    if (io->pause_every && d->to_pos % io->pause_every == 0 && d->to_pos < d->to_size) {
        /* A pause point: everything produced is written, so the output stands exactly here. */
        if (!flush(d, io)) return false;
        d->pausing = true;
    }
    return true;
}

/* ---- the detools stream, one decompressed byte at a time ---- */

/* Reads a detools size a byte at a time; true once it is whole (in d->varint_value, signed by d->varint_negative). */
static bool size_byte(ota_delta_t *d, uint8_t byte, bool *failed) {
    if (d->varint_shift == 0) {
        d->varint_value = byte & 0x3fu;
        d->varint_negative = (byte & 0x40u) != 0;
        d->varint_shift = 6;
    } else {
        if (d->varint_shift > 62) {
            *failed = true;
            return false;
        }
        d->varint_value |= (uint64_t)(byte & 0x7fu) << d->varint_shift;
        d->varint_shift = (uint8_t)(d->varint_shift + 7);
    }
    if (byte & 0x80u) return false;
    d->varint_shift = 0;
    return true;
}

static ota_delta_result_t stream_byte(ota_delta_t *d, uint8_t byte, const ota_delta_io_t *io) {
    bool failed = false;
    switch (d->phase) {
    case PHASE_DATA_FORMAT_SIZE:
        if (!size_byte(d, byte, &failed)) return failed ? refuse(d, ERR_SIZE) : OTA_DELTA_MORE;
        if (d->varint_value != 0 || d->varint_negative) return refuse(d, ERR_DATA_FORMAT);
        d->phase = PHASE_DIFF_SIZE;
        return OTA_DELTA_MORE;
    case PHASE_DIFF_SIZE:
    case PHASE_EXTRA_SIZE: {
        if (!size_byte(d, byte, &failed)) return failed ? refuse(d, ERR_SIZE) : OTA_DELTA_MORE;
        if (d->varint_negative || d->varint_value > d->to_size - d->to_pos) return refuse(d, ERR_SEGMENT);
        d->segment_left = (uint32_t)d->varint_value;
        bool diff = d->phase == PHASE_DIFF_SIZE;
        if (d->segment_left > 0) d->phase = diff ? PHASE_DIFF : PHASE_EXTRA;
        else d->phase = diff ? PHASE_EXTRA_SIZE : PHASE_ADJUSTMENT;
        return OTA_DELTA_MORE;
    }
    case PHASE_DIFF:
    case PHASE_EXTRA: {
        bool diff = d->phase == PHASE_DIFF;
        if (diff && (d->from_pos < 0 || (uint64_t)d->from_pos >= io->base_size)) return refuse(d, ERR_BASE);
        if (!produce(d, byte, diff, io)) return refuse(d, d->error);
        if (--d->segment_left == 0) d->phase = diff ? PHASE_EXTRA_SIZE : PHASE_ADJUSTMENT;
        return OTA_DELTA_MORE;
    }
    case PHASE_ADJUSTMENT: {
        if (!size_byte(d, byte, &failed)) return failed ? refuse(d, ERR_SIZE) : OTA_DELTA_MORE;
        if (d->varint_value > (uint64_t)INT32_MAX) return refuse(d, ERR_SIZE);
        d->from_pos += d->varint_negative ? -(int64_t)d->varint_value : (int64_t)d->varint_value;
        if (d->to_pos < d->to_size) {
            d->phase = PHASE_DIFF_SIZE;
            return OTA_DELTA_MORE;
        }
        if (!flush(d, io)) return refuse(d, d->error);
        d->phase = PHASE_DONE;
        return OTA_DELTA_DONE;
    }
    default:
        /* Decompressed bytes after the new image was complete. */
        return refuse(d, ERR_TRAILING);
    }
}

/* ---- heatshrink: bits in, bytes out ---- */

static ota_delta_result_t emit(ota_delta_t *d, uint8_t byte, const ota_delta_io_t *io) {
    d->window[d->window_fill & ((1u << d->window_bits) - 1u)] = byte;
    d->window_fill++;
    return stream_byte(d, byte, io);
}

static void start_field(ota_delta_t *d, uint8_t state, uint8_t bits) {
    d->hs_state = state;
    d->field_bits_left = bits;
    d->field_value = 0;
}

/* Copies what is left of a back-reference, up to a pause. Bytes after the end of the new image
 * (the image ended inside the copy) are refused by stream_byte. */
static ota_delta_result_t copy_back(ota_delta_t *d, const ota_delta_io_t *io) {
    uint32_t mask = (1u << d->window_bits) - 1u;
    while (d->copy_left > 0 && !d->pausing) {
        d->copy_left--;
        ota_delta_result_t result = emit(d, d->window[(d->window_fill - d->copy_distance) & mask], io);
        if (result == OTA_DELTA_ERROR) return result;
    }
    return d->phase == PHASE_DONE ? OTA_DELTA_DONE : OTA_DELTA_MORE;
}

/* One bit of the compressed stream. */
static ota_delta_result_t heatshrink_bit(ota_delta_t *d, unsigned bit, const ota_delta_io_t *io) {
    if (d->hs_state == HS_TAG) {
        if (bit) start_field(d, HS_LITERAL, 8);
        else start_field(d, HS_INDEX, d->window_bits);
        return OTA_DELTA_MORE;
    }
    d->field_value = (uint16_t)((d->field_value << 1) | bit);
    if (--d->field_bits_left > 0) return OTA_DELTA_MORE;
    switch (d->hs_state) {
    case HS_LITERAL:
        d->hs_state = HS_TAG;
        /* A whole item after the new image is complete: bytes past the end of the patch. */
        if (d->phase == PHASE_DONE) return refuse(d, ERR_TRAILING);
        return emit(d, (uint8_t)d->field_value, io);
    case HS_INDEX:
        d->backref_index = d->field_value;
        start_field(d, HS_COUNT, d->lookahead_bits);
        return OTA_DELTA_MORE;
    default:
        d->hs_state = HS_TAG;
        if (d->phase == PHASE_DONE) return refuse(d, ERR_TRAILING);
        d->copy_distance = (uint16_t)(d->backref_index + 1u);
        d->copy_left = (uint16_t)(d->field_value + 1u);
        return copy_back(d, io);
    }
}

/* ---- the patch, one raw byte at a time ---- */

/* Reads the current patch byte's bits that are left, up to a pause. */
static ota_delta_result_t read_bits(ota_delta_t *d, const ota_delta_io_t *io) {
    ota_delta_result_t result = OTA_DELTA_MORE;
    while (d->input_bits_left > 0 && !d->pausing) {
        d->input_bits_left--;
        ota_delta_result_t step = heatshrink_bit(d, (d->input_byte >> d->input_bits_left) & 1u, io);
        if (step == OTA_DELTA_ERROR) return step;
        if (step == OTA_DELTA_DONE) result = OTA_DELTA_DONE;
    }
    return d->phase == PHASE_DONE ? OTA_DELTA_DONE : result;
}

static ota_delta_result_t patch_byte(ota_delta_t *d, uint8_t byte, const ota_delta_io_t *io) {
    bool failed = false;
    switch (d->phase) {
    case PHASE_TYPE:
        if (((byte >> 4) & 0x7u) != PATCH_TYPE_SEQUENTIAL) return refuse(d, ERR_TYPE);
        if ((byte & 0xfu) != COMPRESSION_HEATSHRINK) return refuse(d, ERR_COMPRESSION);
        d->phase = PHASE_TO_SIZE;
        return OTA_DELTA_MORE;
    case PHASE_TO_SIZE:
        if (!size_byte(d, byte, &failed)) return failed ? refuse(d, ERR_SIZE) : OTA_DELTA_MORE;
        if (d->varint_negative || d->varint_value > UINT32_MAX) return refuse(d, ERR_SIZE);
        d->to_size = (uint32_t)d->varint_value;
        if (d->to_size == 0) {
            d->phase = PHASE_DONE;
            return OTA_DELTA_DONE;
        }
        d->phase = PHASE_HEATSHRINK;
        return OTA_DELTA_MORE;
    case PHASE_HEATSHRINK:
        d->window_bits = (uint8_t)((byte >> 4) + 4u);
        d->lookahead_bits = (uint8_t)((byte & 0xfu) + 3u);
        if (d->window_bits > 8 || d->lookahead_bits >= d->window_bits) return refuse(d, ERR_WINDOW);
        d->hs_state = HS_TAG;
        d->phase = PHASE_DATA_FORMAT_SIZE;
        return OTA_DELTA_MORE;
    default:
        d->input_byte = byte;
        d->input_bits_left = 8;
        return read_bits(d, io);
    }
}

/* The work a pause left: the rest of a copy, then the rest of the patch byte it came in. */
static ota_delta_result_t finish_paused(ota_delta_t *d, const ota_delta_io_t *io) {
    if (d->copy_left > 0 && copy_back(d, io) == OTA_DELTA_ERROR) return OTA_DELTA_ERROR;
    if (d->pausing) return OTA_DELTA_PAUSED;
    if (d->input_bits_left > 0 && read_bits(d, io) == OTA_DELTA_ERROR) return OTA_DELTA_ERROR;
    if (d->pausing) return OTA_DELTA_PAUSED;
    return d->phase == PHASE_DONE ? OTA_DELTA_DONE : OTA_DELTA_MORE;
}

ota_delta_result_t ota_delta_feed(ota_delta_t *delta, const uint8_t *patch, size_t len, const ota_delta_io_t *io, size_t *consumed) {
    *consumed = 0;
    if (delta->phase == PHASE_FAILED) return OTA_DELTA_ERROR;
    delta->pausing = false;
    ota_delta_result_t result = finish_paused(delta, io);
    if (result == OTA_DELTA_ERROR || result == OTA_DELTA_PAUSED) return result;
    for (size_t i = 0; i < len; i++) {
        /* After the end only the padding of the last byte may follow, and no whole byte. */
        if (delta->phase == PHASE_DONE && delta->to_size == 0) return refuse(delta, ERR_TRAILING);
        result = patch_byte(delta, patch[i], io);
        *consumed = i + 1;
        if (result == OTA_DELTA_ERROR) return result;
        if (delta->pausing) return OTA_DELTA_PAUSED;
    }
    return delta->phase == PHASE_DONE ? OTA_DELTA_DONE : result;
}

/* ---- the saved form: version 1, little-endian, field by field ---- */

#define SAVED_VERSION 1u

static uint8_t *put(uint8_t *at, uint64_t value, unsigned bytes) {
    for (unsigned i = 0; i < bytes; i++) at[i] = (uint8_t)(value >> (8u * i));
    return at + bytes;
}

static const uint8_t *get(const uint8_t *at, uint64_t *value, unsigned bytes) {
    *value = 0;
    for (unsigned i = 0; i < bytes; i++) *value |= (uint64_t)at[i] << (8u * i);
    return at + bytes;
}

void ota_delta_save(const ota_delta_t *d, uint8_t out[OTA_DELTA_SAVED_BYTES]) {
    uint8_t *at = out;
    at = put(at, SAVED_VERSION, 1);
    at = put(at, d->phase, 1);
    at = put(at, d->varint_shift, 1);
    at = put(at, d->varint_negative, 1);
    at = put(at, d->varint_value, 8);
    at = put(at, d->to_size, 4);
    at = put(at, d->to_pos, 4);
    at = put(at, d->segment_left, 4);
    at = put(at, (uint64_t)d->from_pos, 8);
    at = put(at, d->window_bits, 1);
    at = put(at, d->lookahead_bits, 1);
    at = put(at, d->hs_state, 1);
    at = put(at, d->field_bits_left, 1);
    at = put(at, d->field_value, 2);
    at = put(at, d->backref_index, 2);
    at = put(at, d->copy_left, 2);
    at = put(at, d->copy_distance, 2);
    at = put(at, d->input_byte, 1);
    at = put(at, d->input_bits_left, 1);
    at = put(at, d->window_fill, 4);
    memcpy(at, d->window, sizeof d->window);
    at += sizeof d->window;
    memcpy(at, d->buffer, sizeof d->buffer);
    at += sizeof d->buffer;
    at = put(at, d->buffered, 2);
    at = put(at, d->buffered_is_diff, 1);
    at = put(at, d->buffered_from, 4);
    put(at, d->error, 1);
}

bool ota_delta_load(ota_delta_t *delta, const uint8_t in[OTA_DELTA_SAVED_BYTES]) {
    /* Read in place (a copy would take the state's size again on the stack), then checked. */
    ota_delta_t *d = delta;
    memset(d, 0, sizeof *d);
    uint64_t v;
    const uint8_t *at = in;
    at = get(at, &v, 1);
    if (v != SAVED_VERSION) {
        ota_delta_init(delta);
        return false;
    }
    at = get(at, &v, 1), d->phase = (uint8_t)v;
    at = get(at, &v, 1), d->varint_shift = (uint8_t)v;
    at = get(at, &v, 1), d->varint_negative = v != 0;
    at = get(at, &v, 8), d->varint_value = v;
    at = get(at, &v, 4), d->to_size = (uint32_t)v;
    at = get(at, &v, 4), d->to_pos = (uint32_t)v;
    at = get(at, &v, 4), d->segment_left = (uint32_t)v;
    at = get(at, &v, 8), d->from_pos = (int64_t)v;
    at = get(at, &v, 1), d->window_bits = (uint8_t)v;
    at = get(at, &v, 1), d->lookahead_bits = (uint8_t)v;
    at = get(at, &v, 1), d->hs_state = (uint8_t)v;
    at = get(at, &v, 1), d->field_bits_left = (uint8_t)v;
    at = get(at, &v, 2), d->field_value = (uint16_t)v;
    at = get(at, &v, 2), d->backref_index = (uint16_t)v;
    at = get(at, &v, 2), d->copy_left = (uint16_t)v;
    at = get(at, &v, 2), d->copy_distance = (uint16_t)v;
    at = get(at, &v, 1), d->input_byte = (uint8_t)v;
    at = get(at, &v, 1), d->input_bits_left = (uint8_t)v;
    at = get(at, &v, 4), d->window_fill = (uint32_t)v;
    memcpy(d->window, at, sizeof d->window);
    at += sizeof d->window;
    memcpy(d->buffer, at, sizeof d->buffer);
    at += sizeof d->buffer;
    at = get(at, &v, 2), d->buffered = (uint16_t)v;
    at = get(at, &v, 1), d->buffered_is_diff = v != 0;
    at = get(at, &v, 4), d->buffered_from = (uint32_t)v;
    get(at, &v, 1), d->error = (uint8_t)v;
    /* What no state this applier wrote can hold: the saved bytes are damaged or not its own. */
    bool heatshrink_started = d->phase > PHASE_HEATSHRINK && d->phase != PHASE_FAILED;
    if (d->phase > PHASE_FAILED || d->hs_state > HS_COUNT || d->buffered > OTA_DELTA_BUFFER_BYTES || d->to_pos > d->to_size || d->buffered > d->to_pos ||
        d->varint_shift > 69 || d->input_bits_left > 7 || d->copy_left > 128 || (d->copy_left > 0 && (d->copy_distance == 0 || d->copy_distance > 256)) || (heatshrink_started && (d->window_bits < 4 || d->window_bits > 8 || d->lookahead_bits >= d->window_bits))) {
        ota_delta_init(delta);
        return false;
    }
    return true;
}
