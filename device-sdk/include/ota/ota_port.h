/*
 * The ports the OTA core runs on: HTTP, slot storage, persisted state, crypto and the system
 * (clock, randomness, reboot, log). A port is a struct of function pointers and the context they
 * are called with. Every function returns an ota_err_t and never aborts; none may be NULL unless
 * its comment says so.
 *
 * The core includes no OS or vendor header: everything it needs from the device comes through
 * here. port/linux implements these on libcurl, files and libsodium; port/esp_idf on
 * esp_http_client, esp_ota_ops, NVS, mbedTLS and libsodium.
 */
#ifndef OTA_PORT_H
#define OTA_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    OTA_OK = 0,
    OTA_ERR_IO = -1,          /* a port's I/O failed: network, flash, storage */
    OTA_ERR_INVALID_ARG = -2, /* a configuration value or argument is out of range */
    OTA_ERR_NO_SPACE = -3,    /* a fixed buffer or the slot is too small */
    OTA_ERR_STATE = -4,       /* the call does not fit the client's current state */
    OTA_ERR_PROTOCOL = -5,    /* the server's answer could not be understood */
} ota_err_t;

/* What an HTTP answer's status line and headers said. */
typedef struct {
    int status;               /* the HTTP status, e.g. 200, 206, 403 */
    uint32_t retry_after_s;   /* Retry-After in seconds; 0 when absent */
    int64_t content_length;   /* Content-Length; -1 when absent */
    int64_t range_start;      /* first byte of a 206's Content-Range; -1 when absent */
    int64_t total_size;       /* the size after the '/' of Content-Range (206 and 416); -1 when absent */
    char etag[72];            /* the ETag header as sent, quotes included; empty when absent */
} ota_http_head_t;

typedef struct {
    void *ctx;
    /*
     * POSTs `body` (JSON) to `url` with `Authorization: Bearer <bearer>`; copies the answer's body
     * into `resp` (NUL-terminated) and its head into `head`. An answer longer than resp_cap - 1
     * bytes is OTA_ERR_NO_SPACE. A transport failure (no connection, timeout) is OTA_ERR_IO; any
     * HTTP status is OTA_OK with head->status set.
     */
    ota_err_t (*post_json)(void *ctx, const char *url, const char *bearer, const char *body, char *resp, size_t resp_cap,
                           ota_http_head_t *head);
    /*
     * Starts a GET of `url`, with `Range: bytes=<range_start>-` when range_start > 0 and
     * `If-Range: <if_range>` when if_range is not empty, and returns once the head has arrived.
     * Only one GET is open at a time.
     */
    ota_err_t (*get_open)(void *ctx, const char *url, uint32_t range_start, const char *if_range, ota_http_head_t *head);
    /*
     * Reads the next bytes of the open GET's body into buf (at most cap); *n = 0 at its end. A
     * broken connection, or no byte for the port's stall timeout, is OTA_ERR_IO.
     */
    ota_err_t (*get_read)(void *ctx, uint8_t *buf, size_t cap, size_t *n);
    /* Ends the open GET, if any, whether or not its body was read to the end. */
    void (*get_close)(void *ctx);
    /*
     * POSTs `len` bytes of `body` as application/octet-stream, otherwise as post_json. May be NULL:
     * the device then sends no core dumps (ota/ota_coredump.h).
     */
    ota_err_t (*post_bytes)(void *ctx, const char *url, const char *bearer, const uint8_t *body, size_t len, char *resp, size_t resp_cap,
                            ota_http_head_t *head);
} ota_http_port_t;

/* Which slot the device booted from, and whether it runs there as a trial. */
typedef struct {
    uint8_t running_slot;  /* 0 or 1 */
    bool pending_verify;   /* the running image is a trial: mark_valid keeps it, rollback refuses it */
} ota_boot_info_t;

typedef struct {
    void *ctx;
    ota_err_t (*boot_info)(void *ctx, ota_boot_info_t *info);
    /*
     * Prepares the inactive slot for an image of image_size bytes. With resume_offset 0 the slot
     * is erased; otherwise bytes [0, resume_offset) are kept, as a previous flush left them.
     * OTA_ERR_NO_SPACE when the image does not fit.
     */
    ota_err_t (*open)(void *ctx, uint32_t image_size, uint32_t resume_offset);
    /* Writes bytes of the inactive slot; offsets only grow between open and finish. */
    ota_err_t (*write)(void *ctx, uint32_t offset, const uint8_t *data, size_t len);
    /* Reads back bytes of the inactive slot (to hash what a power cut left, before resuming). */
    ota_err_t (*read)(void *ctx, uint32_t offset, uint8_t *data, size_t len);
    /* Once this returns, every byte written so far survives a power cut. */
    ota_err_t (*flush)(void *ctx);
    /* The whole image is written: finalize it (ESP-IDF: esp_ota_end, which validates it). */
    ota_err_t (*finish)(void *ctx);
    /* Boots the inactive slot next, as a trial. Atomic: a power cut leaves the old or the new choice. */
    ota_err_t (*activate)(void *ctx);
    /* Keeps the running trial for good. Harmless when it is not a trial. */
    ota_err_t (*mark_valid)(void *ctx);
    /* Refuses the running trial: the previous slot boots next. May reboot at once (ESP-IDF does). */
    ota_err_t (*rollback)(void *ctx);
    /*
     * Reads bytes of the running slot: the base a delta patch is applied to. A read past the
     * running image's slot is OTA_ERR_INVALID_ARG. May be NULL: the client then takes full images only.
     */
    ota_err_t (*read_running)(void *ctx, uint32_t offset, uint8_t *data, size_t len);
} ota_slot_port_t;

typedef struct {
    void *ctx;
    /* Reads the saved record into buf; *len = 0 when none was ever saved. */
    ota_err_t (*load)(void *ctx, void *buf, size_t cap, size_t *len);
    /*
     * Replaces the saved record. Atomic across a power cut: a load afterwards returns either the
     * previous record or this one, whole (write the new copy, then switch to it).
     */
    ota_err_t (*save)(void *ctx, const void *buf, size_t len);
} ota_state_port_t;

/*
 * SHA-256, and Ed25519 verification over a message that arrives in pieces (the image is never
 * in memory whole). The states live in buffers the core owns: each must be at most
 * OTA_CRYPTO_STATE_MAX bytes, which the core checks at ota_client_init.
 */
#define OTA_CRYPTO_STATE_MAX 256

typedef struct {
    void *ctx;
    size_t sha256_state_size;
    size_t ed25519_state_size;
    void (*sha256_init)(void *state);
    void (*sha256_update)(void *state, const uint8_t *data, size_t len);
    void (*sha256_final)(void *state, uint8_t digest[32]);
    /* Starts verifying `signature` (64 bytes) by `public_key` (32 bytes) over a streamed message. */
    void (*ed25519_init)(void *state, const uint8_t signature[64], const uint8_t public_key[32]);
    void (*ed25519_update)(void *state, const uint8_t *data, size_t len);
    /* True when the signature is valid for everything passed to update. */
    bool (*ed25519_final)(void *state, const uint8_t signature[64], const uint8_t public_key[32]);
} ota_crypto_port_t;

typedef enum { OTA_LOG_ERROR, OTA_LOG_WARN, OTA_LOG_INFO, OTA_LOG_DEBUG } ota_log_level_t;

typedef struct {
    void *ctx;
    /* Milliseconds from any fixed point; never goes back while the device runs. */
    uint64_t (*now_ms)(void *ctx);
    /* Any 32 random bits, for the jitter of retries. */
    uint32_t (*random)(void *ctx);
    /* Restarts the device. On hardware it does not return; a port that returns is restarted by its host. */
    void (*reboot)(void *ctx);
    /* One line of log; may be NULL. */
    void (*log)(void *ctx, ota_log_level_t level, const char *message);
} ota_system_port_t;

typedef struct {
    ota_http_port_t http;
    ota_slot_port_t slot;
    ota_state_port_t state;
    ota_crypto_port_t crypto;
    ota_system_port_t system;
} ota_ports_t;

#ifdef __cplusplus
}
#endif

#endif /* OTA_PORT_H */
