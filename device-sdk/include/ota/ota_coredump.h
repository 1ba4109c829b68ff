/*
 * Sends the core dump ESP-IDF wrote to flash after a panic to the service (docs/api.md, "Core
 * dumps"), in pieces that resume after a cut, and erases it only once the service has it whole.
 *
 * Like the client, the sender works in bounded steps and says how long to wait between them:
 *
 *     ota_coredump_sender_t sender;
 *     if (ota_coredump_begin(&sender, &config, &dump_port) == OTA_OK)
 *         while (ota_coredump_outcome(&sender) == OTA_COREDUMP_PENDING) {
 *             uint32_t wait_ms;
 *             if (ota_coredump_step(&sender, &wait_ms) != OTA_OK) break;
 *             sleep_ms(wait_ms);
 *         }
 *
 * It uses the client's configuration (server, token, device id, retry timing) and its ports: the
 * HTTP port's post_bytes, SHA-256 and the system port.
 */
#ifndef OTA_COREDUMP_H
#define OTA_COREDUMP_H

#include "ota/ota_client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the dump one request carries: the service takes up to 64 KiB; this bounds the RAM. */
#define OTA_COREDUMP_PIECE_BYTES 4096u
/* A dump larger than this is not sent (the service's COREDUMP_MAX_BYTES default). */
#define OTA_COREDUMP_MAX_BYTES (1024u * 1024u)
/* Requests in a row that fail (no connection, 5xx, 429) before the sender gives up for this boot. */
#define OTA_COREDUMP_MAX_FAILURES 8u

/* Where the dump is: ESP-IDF's core dump partition (port/esp_idf), or a file (port/linux). */
typedef struct {
    void *ctx;
    /* The dump's size in bytes; 0 when there is none (or it is not whole). */
    ota_err_t (*size)(void *ctx, uint32_t *size);
    ota_err_t (*read)(void *ctx, uint32_t offset, uint8_t *data, size_t len);
    /* Forgets the dump: size answers 0 afterwards. */
    ota_err_t (*erase)(void *ctx);
} ota_coredump_port_t;

typedef enum {
    OTA_COREDUMP_NONE,     /* there was no dump */
    OTA_COREDUMP_PENDING,  /* step on */
    OTA_COREDUMP_SENT,     /* the service has it whole; it was erased */
    OTA_COREDUMP_REFUSED,  /* the service refused it for good (not a dump it can read, too large); it was erased */
    OTA_COREDUMP_KEPT,     /* not sent in this boot (no connection, the token refused, the hour's allowance spent): kept for the next */
} ota_coredump_outcome_t;

typedef struct {
    const ota_config_t *config;
    const ota_coredump_port_t *dump;
    ota_coredump_outcome_t outcome;
    uint32_t size;
    uint32_t hashed;            /* bytes of the dump hashed so far */
    uint32_t offset;            /* where the next piece starts, as the service last said */
    uint32_t failures;          /* requests in a row that failed */
    char sha256_hex[65];
    OTA_STATE_ALIGN uint8_t sha256_state[OTA_CRYPTO_STATE_MAX];
    uint8_t piece[OTA_COREDUMP_PIECE_BYTES];
    char url[OTA_URL_MAX];
    char response[512];
} ota_coredump_sender_t;

/* Reads whether there is a dump. The config must have passed ota_client_init. */
ota_err_t ota_coredump_begin(ota_coredump_sender_t *sender, const ota_config_t *config, const ota_coredump_port_t *dump);

/*
 * One bounded piece of work: hashing one piece of the dump, or sending one (one HTTP request).
 * Sets *wait_ms to how long to wait before the next step (0: at once; a back-off after a failure).
 * Errors of the network or the service are handled inside; what is returned is an error of a port.
 */
ota_err_t ota_coredump_step(ota_coredump_sender_t *sender, uint32_t *wait_ms);

ota_coredump_outcome_t ota_coredump_outcome(const ota_coredump_sender_t *sender);
const char *ota_coredump_outcome_name(ota_coredump_outcome_t outcome);

#ifdef __cplusplus
}
#endif

#endif /* OTA_COREDUMP_H */
