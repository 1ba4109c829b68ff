/*
 * The linux port's system (clock, randomness, reboot by re-executing the process, log) and the
 * wiring of every port; its crypto is ota_linux_crypto.c.
 */
#include <stdlib.h>
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
    /* What the next boot's health reports as its reset (ota_linux_health_start). */
    setenv(OTA_LINUX_RESET_REASON_ENV, "software", 1);
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

/* ---- device health ---- */

static uint64_t seconds_since_start(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec;
}

static void health_save(ota_linux_health_t *health) {
    if (ota_linux_replace_file(health->dir, "health", &health->keeper.counts, sizeof health->keeper.counts) != 0) {
        fprintf(stderr, "ota-device: the health counts could not be saved\n");
    }
    health->saved_at_s = seconds_since_start() - health->started_at_s;
}

void ota_linux_health_start(ota_linux_health_t *health, const ota_linux_t *port, const ota_client_t *client, const char *reset_reason) {
    memset(health, 0, sizeof *health);
    health->dir = port->options.dir;
    health->started_at_s = seconds_since_start();
    const char *after_reboot = getenv(OTA_LINUX_RESET_REASON_ENV);
    if (after_reboot && *after_reboot) reset_reason = after_reboot;
    ota_health_counts_t saved;
    char path[1024];
    snprintf(path, sizeof path, "%s/health", health->dir);
    FILE *file = fopen(path, "rb");
    bool loaded = file && fread(&saved, 1, sizeof saved, file) == sizeof saved;
    if (file) fclose(file);
    /* Kept in static storage: the keeper holds the pointer. */
    static char reason[32];
    snprintf(reason, sizeof reason, "%s", reset_reason && *reset_reason ? reset_reason : "power_on");
    ota_health_boot(&health->keeper, loaded ? &saved : NULL, ota_client_running_build(client), reason, ota_client_booted_after_rollback(client));
    health_save(health);
}

void ota_linux_health_update(ota_linux_health_t *health, const ota_client_t *client) {
    uint64_t seconds = seconds_since_start() - health->started_at_s;
    /* The linux "device" reports no heap: min_free_heap is left out. */
    bool installed = ota_health_update(&health->keeper, ota_client_running_build(client), seconds, -1);
    if (installed || seconds - health->saved_at_s >= OTA_LINUX_HEALTH_SAVE_S) health_save(health);
}
