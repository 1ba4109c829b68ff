/*
 * The saved record's bytes: a fixed little-endian layout, version 3, read and written field by
 * field, so that its size and meaning are the same on every ABI (an ESP32's 32-bit RISC-V or
 * Xtensa, a 64-bit host) and a later layout can be told apart and read.
 *
 *   offset  size  field
 *        0     4  magic "OTA2" (0x4f, 0x54, 0x41, 0x32)
 *        4     2  version (3)
 *        6     2  length of the whole record in bytes (OTA_RECORD_BYTES)
 *        8     1  phase (ota_phase_t)
 *        9     1  target_slot
 *       10     1  has_signature
 *       11     1  pending_event (ota_event_t)
 *       12     1  pending_reason (ota_reason_t)
 *       13     3  zero
 *       16     8  running_build (two's complement)
 *       24     8  build_number
 *       32     8  pending_build
 *       40     4  image_size
 *       44     4  offset
 *       48    40  deployment_id (NUL-padded)
 *       88    40  pending_deployment_id
 *      128    32  sha256
 *      160    64  signature
 *      224    32  running_sha256
 *      256    32  patch_sha256
 *      288     4  patch_size
 *      292     4  patch_offset
 *      296     1  has_running_sha256
 *      297     1  delta
 *      298     1  delta_failure
 *      299     1  zero
 *      300   570  apply_state (the applier's own saved form, ota_delta_save)
 *      870     2  zero
 *      872     4  CRC-32 (IEEE) of bytes 0 to 871
 *
 * Records of the releases before are read too, so that a device updating its firmware from one
 * keeps its update under way: version 2 (the first 224 bytes above, then its CRC-32 at 224; 228
 * bytes) and version 1 (the raw C struct of the same device's ABI). Their running image's SHA-256
 * is the last offer's when that offer is what runs (the record is idle and its build runs).
 */
#ifndef OTA_RECORD_H
#define OTA_RECORD_H

#include "ota/ota_client.h"

#define OTA_RECORD_BYTES 876u

/* Writes `record` into out[OTA_RECORD_BYTES]. */
void ota_record_encode(const ota_record_t *record, uint8_t out[OTA_RECORD_BYTES]);

/* Reads a saved record of `len` bytes: true with *record filled, or false when it is not one this
 * client can read (empty, cut short, damaged, or of a later version). */
bool ota_record_decode(const uint8_t *bytes, size_t len, ota_record_t *record);

#endif
