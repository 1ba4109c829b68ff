/*
 * The linux port's crypto (libsodium), system (clock, randomness, reboot by re-executing the
 * process, log) and the wiring of every port.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ota_linux_internal.h"

/* ---- crypto ---- */

static void sha256_init(void *state) {
    crypto_hash_sha256_init(state);
}

static void sha256_update(void *state, const uint8_t *data, size_t len) {
    crypto_hash_sha256_update(state, data, len);
}

static void sha256_final(void *state, uint8_t digest[32]) {
    crypto_hash_sha256_final(state, digest);
}

/*
 * Ed25519 (RFC 8032) over a message that arrives in pieces. libsodium's verify wants the whole
 * message in memory, which an image is not; but the only pass over the message is the SHA-512 of
 * R || A || M, so that hash is streamed and the group equation [S]B = R + [k]A is checked with
 * libsodium's point operations at the end. The unit tests hold it to crypto_sign_verify_detached.
 */
static void ed25519_init(void *state, const uint8_t signature[64], const uint8_t public_key[32]) {
    crypto_hash_sha512_init(state);
    crypto_hash_sha512_update(state, signature, 32);
    crypto_hash_sha512_update(state, public_key, 32);
}

static void ed25519_update(void *state, const uint8_t *data, size_t len) {
    crypto_hash_sha512_update(state, data, len);
}

/* S < L, the group order: RFC 8032 refuses a signature whose S is not reduced. */
static bool scalar_is_canonical(const uint8_t s[32]) {
    static const uint8_t order[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
    for (int i = 31; i >= 0; i--) {
        if (s[i] < order[i]) return true;
        if (s[i] > order[i]) return false;
    }
    return false;
}

static bool ed25519_final(void *state, const uint8_t signature[64], const uint8_t public_key[32]) {
    uint8_t hash[64], k[32], s_b[32], k_a[32], sum[32];
    crypto_hash_sha512_final(state, hash);
    crypto_core_ed25519_scalar_reduce(k, hash);
    const uint8_t *r = signature;
    const uint8_t *s = signature + 32;
    if (!scalar_is_canonical(s) || !crypto_core_ed25519_is_valid_point(public_key)) return false;
    if (crypto_scalarmult_ed25519_base_noclamp(s_b, s) != 0) return false;
    if (crypto_scalarmult_ed25519_noclamp(k_a, k, public_key) != 0) return false;
    if (crypto_core_ed25519_add(sum, r, k_a) != 0) return false;
    return sodium_memcmp(sum, s_b, sizeof sum) == 0;
}

/* ---- system ---- */

static uint64_t now_ms(void *ctx) {
    (void)ctx;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

static uint32_t random32(void *ctx) {
    (void)ctx;
    return randombytes_random();
}

/* A reboot is a new process on the same device directory: the "bootloader" runs again at init. */
static void reboot(void *ctx) {
    ota_linux_t *port = ctx;
    ota_linux_log(port, OTA_LOG_INFO, "rebooting");
    fflush(NULL);
    ota_linux_close(port);
    execv("/proc/self/exe", port->options.argv);
    ota_linux_log(port, OTA_LOG_ERROR, "reboot failed: the process could not re-execute itself");
}

void ota_linux_log(void *ctx, ota_log_level_t level, const char *message) {
    ota_linux_t *port = ctx;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    fprintf(port->options.log, "%02d:%02d:%02d.%03ld ota %s: %s\n", utc.tm_hour, utc.tm_min, utc.tm_sec, now.tv_nsec / 1000000L,
            names[level], message);
    fflush(port->options.log);
}

ota_crypto_port_t ota_linux_crypto_port(void) {
    return (ota_crypto_port_t){
        .ctx = NULL,
        .sha256_state_size = sizeof(crypto_hash_sha256_state),
        .ed25519_state_size = sizeof(crypto_hash_sha512_state),
        .sha256_init = sha256_init,
        .sha256_update = sha256_update,
        .sha256_final = sha256_final,
        .ed25519_init = ed25519_init,
        .ed25519_update = ed25519_update,
        .ed25519_final = ed25519_final,
    };
}

/* ---- wiring ---- */

int ota_linux_init(ota_linux_t *port, const ota_linux_options_t *options) {
    memset(port, 0, sizeof *port);
    port->options = *options;
    if (!port->options.max_trial_boots) port->options.max_trial_boots = 1;
    if (!port->options.stall_timeout_s) port->options.stall_timeout_s = 30;
    if (!port->options.request_timeout_s) port->options.request_timeout_s = 30;
    if (!port->options.log) port->options.log = stderr;
    if (sodium_init() < 0) {
        fprintf(stderr, "ota-linux: libsodium could not start\n");
        return -1;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "ota-linux: libcurl could not start\n");
        return -1;
    }
    if (ota_linux_boot(port) != 0) return -1;
    ota_linux_http_bind(port);
    ota_linux_flash_bind(port);
    port->ports.crypto = ota_linux_crypto_port();
    port->ports.system = (ota_system_port_t){.ctx = port, .now_ms = now_ms, .random = random32, .reboot = reboot, .log = ota_linux_log};
    return 0;
}

void ota_linux_close(ota_linux_t *port) {
    ota_linux_http_close(port);
    if (port->slot_file) fclose(port->slot_file);
    port->slot_file = NULL;
}
