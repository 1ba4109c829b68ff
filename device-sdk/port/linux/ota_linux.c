/*
 * The linux port's system (clock, randomness, reboot by re-executing the process, log) and the
 * wiring of every port; its crypto is ota_linux_crypto.c.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ota_linux_internal.h"
#include "ota_linux_crypto.h"

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
