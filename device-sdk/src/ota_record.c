/* The saved record's bytes (see ota_record.h for the layout). */
#include "ota_record.h"

#include <stddef.h>
#include <string.h>

#define MAGIC_V2 0x3241544fu /* "OTA2", little-endian */
#define MAGIC_V1 0x4f544131u /* "OTA1", as the previous release stored it (native order) */
#define V2_BYTES 228u
#define V2_CRC_AT 224u
#define CRC_AT 872u

/* The previous release's record: the raw struct, in this device's own ABI. Read, never written. */
typedef struct {
    uint32_t magic;
    uint32_t version;
    uint8_t phase;
    uint8_t target_slot;
    uint8_t has_signature;
    uint8_t pending_event;
    uint8_t pending_reason;
    uint8_t reserved[3];
    int64_t running_build;
    int64_t build_number;
    int64_t pending_build;
    uint32_t image_size;
    uint32_t offset;
    char deployment_id[40];
    char pending_deployment_id[40];
    uint8_t sha256[32];
    uint8_t signature[64];
    uint32_t crc32;
} record_v1_t;

static uint32_t crc32_of(const uint8_t *data, size_t len) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < len; i++) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put_u16(uint8_t *at, uint16_t value) {
    for (int i = 0; i < 2; i++) at[i] = (uint8_t)(value >> (8 * i));
}

static void put_u32(uint8_t *at, uint32_t value) {
    for (int i = 0; i < 4; i++) at[i] = (uint8_t)(value >> (8 * i));
}

static void put_i64(uint8_t *at, int64_t value) {
    uint64_t bits = (uint64_t)value;
    for (int i = 0; i < 8; i++) at[i] = (uint8_t)(bits >> (8 * i));
}

static uint16_t get_u16(const uint8_t *at) {
    return (uint16_t)(at[0] | (at[1] << 8));
}

static uint32_t get_u32(const uint8_t *at) {
    uint32_t value = 0;
    for (int i = 3; i >= 0; i--) value = (value << 8) | at[i];
    return value;
}

static int64_t get_i64(const uint8_t *at) {
    uint64_t bits = 0;
    for (int i = 7; i >= 0; i--) bits = (bits << 8) | at[i];
    return (int64_t)bits;
}

/* A text field, NUL-terminated whatever the bytes say. */
static void get_text(char *out, const uint8_t *at, size_t size) {
    memcpy(out, at, size);
    out[size - 1] = '\0';
}

/* What a record of a release before this one leaves out: the running image's SHA-256 is its last
 * offer's when that offer is what runs; no patch was ever under way. */
static void derive_running_sha256(ota_record_t *record) {
    if (record->phase == OTA_PHASE_IDLE && record->image_size > 0 && record->running_build == record->build_number) {
        record->has_running_sha256 = 1;
        memcpy(record->running_sha256, record->sha256, sizeof record->running_sha256);
    }
}

void ota_record_encode(const ota_record_t *record, uint8_t out[OTA_RECORD_BYTES]) {
    memset(out, 0, OTA_RECORD_BYTES);
    put_u32(out + 0, MAGIC_V2);
    put_u16(out + 4, 3);
    put_u16(out + 6, OTA_RECORD_BYTES);
    out[8] = record->phase;
    out[9] = record->target_slot;
    out[10] = record->has_signature;
    out[11] = record->pending_event;
    out[12] = record->pending_reason;
    put_i64(out + 16, record->running_build);
    put_i64(out + 24, record->build_number);
    put_i64(out + 32, record->pending_build);
    put_u32(out + 40, record->image_size);
    put_u32(out + 44, record->offset);
    memcpy(out + 48, record->deployment_id, 40);
    memcpy(out + 88, record->pending_deployment_id, 40);
    memcpy(out + 128, record->sha256, 32);
    memcpy(out + 160, record->signature, 64);
    memcpy(out + 224, record->running_sha256, 32);
    memcpy(out + 256, record->patch_sha256, 32);
    put_u32(out + 288, record->patch_size);
    put_u32(out + 292, record->patch_offset);
    out[296] = record->has_running_sha256;
    out[297] = record->delta;
    out[298] = record->delta_failure;
    memcpy(out + 300, record->apply_state, OTA_DELTA_SAVED_BYTES);
    put_u32(out + CRC_AT, crc32_of(out, CRC_AT));
}

static bool decode_v1(const uint8_t *bytes, size_t len, ota_record_t *record) {
    record_v1_t v1;
    if (len != sizeof v1) return false;
    memcpy(&v1, bytes, sizeof v1);
    if (v1.magic != MAGIC_V1 || v1.version != 1 || v1.crc32 != crc32_of(bytes, offsetof(record_v1_t, crc32))) return false;
    memset(record, 0, sizeof *record);
    record->phase = v1.phase;
    record->target_slot = v1.target_slot;
    record->has_signature = v1.has_signature;
    record->pending_event = v1.pending_event;
    record->pending_reason = v1.pending_reason;
    record->running_build = v1.running_build;
    record->build_number = v1.build_number;
    record->pending_build = v1.pending_build;
    record->image_size = v1.image_size;
    record->offset = v1.offset;
    get_text(record->deployment_id, (const uint8_t *)v1.deployment_id, sizeof record->deployment_id);
    get_text(record->pending_deployment_id, (const uint8_t *)v1.pending_deployment_id, sizeof record->pending_deployment_id);
    memcpy(record->sha256, v1.sha256, sizeof record->sha256);
    memcpy(record->signature, v1.signature, sizeof record->signature);
    derive_running_sha256(record);
    return true;
}

/* The fields versions 2 and 3 share (bytes 8 to 223). */
static void decode_common(const uint8_t *bytes, ota_record_t *record) {
    memset(record, 0, sizeof *record);
    record->phase = bytes[8];
    record->target_slot = bytes[9];
    record->has_signature = bytes[10];
    record->pending_event = bytes[11];
    record->pending_reason = bytes[12];
    record->running_build = get_i64(bytes + 16);
    record->build_number = get_i64(bytes + 24);
    record->pending_build = get_i64(bytes + 32);
    record->image_size = get_u32(bytes + 40);
    record->offset = get_u32(bytes + 44);
    get_text(record->deployment_id, bytes + 48, sizeof record->deployment_id);
    get_text(record->pending_deployment_id, bytes + 88, sizeof record->pending_deployment_id);
    memcpy(record->sha256, bytes + 128, sizeof record->sha256);
    memcpy(record->signature, bytes + 160, sizeof record->signature);
}

bool ota_record_decode(const uint8_t *bytes, size_t len, ota_record_t *record) {
    if (len >= 8 && get_u32(bytes) != MAGIC_V2) return decode_v1(bytes, len, record);
    if (len < 8) return false;
    uint16_t version = get_u16(bytes + 4);
    if (version == 2) {
        if (len != V2_BYTES || get_u16(bytes + 6) != V2_BYTES || get_u32(bytes + V2_CRC_AT) != crc32_of(bytes, V2_CRC_AT)) return false;
        decode_common(bytes, record);
        derive_running_sha256(record);
        return true;
    }
    if (version != 3 || len != OTA_RECORD_BYTES || get_u16(bytes + 6) != OTA_RECORD_BYTES) return false;
    if (get_u32(bytes + CRC_AT) != crc32_of(bytes, CRC_AT)) return false;
    decode_common(bytes, record);
    memcpy(record->running_sha256, bytes + 224, sizeof record->running_sha256);
    memcpy(record->patch_sha256, bytes + 256, sizeof record->patch_sha256);
    record->patch_size = get_u32(bytes + 288);
    record->patch_offset = get_u32(bytes + 292);
    record->has_running_sha256 = bytes[296];
    record->delta = bytes[297];
    record->delta_failure = bytes[298];
    memcpy(record->apply_state, bytes + 300, OTA_DELTA_SAVED_BYTES);
    return true;
}
