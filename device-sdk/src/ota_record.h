/*
 * The saved record's bytes: a fixed little-endian layout, version 2, read and written field by
 * field, so that its size and meaning are the same on every ABI (an ESP32's 32-bit RISC-V or
 * Xtensa, a 64-bit host) and a later layout can be told apart and read.
 *
 *   offset  size  field
 *        0     4  magic "OTA2" (0x4f, 0x54, 0x41, 0x32)
 *        4     2  version (2)
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
 *      224     4  CRC-32 (IEEE) of bytes 0 to 223
 *
 * A record of version 1 (the previous release's, the raw C struct of the same device's ABI) is
 * read too, so that a device updating its firmware from that release keeps its update under way.
 */
#ifndef OTA_RECORD_H
#define OTA_RECORD_H

#include "ota/ota_client.h"

#define OTA_RECORD_BYTES 228u

/* Writes `record` into out[OTA_RECORD_BYTES]. */
void ota_record_encode(const ota_record_t *record, uint8_t out[OTA_RECORD_BYTES]);

/* Reads a saved record of `len` bytes: true with *record filled, or false when it is not one this
 * client can read (empty, cut short, damaged, or of a later version). */
bool ota_record_decode(const uint8_t *bytes, size_t len, ota_record_t *record);

/* The largest saved record this client reads (a version 1 record is 228 or 232 bytes, by ABI). */
#define OTA_RECORD_READ_MAX 256u

#endif
