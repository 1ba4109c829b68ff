#include "ota/ota_health.h"

#include <string.h>

/* The layout the ports save as bytes must not move with the ABI. */
_Static_assert(sizeof(ota_health_counts_t) == 24, "ota_health_counts_t is saved as 24 bytes");

static const char *const ABNORMAL_RESETS[] = {"panic", "int_watchdog", "task_watchdog", "watchdog", "brownout", "cpu_lockup"};

bool ota_reset_reason_abnormal(const char *reset_reason) {
    if (!reset_reason) return false;
    for (size_t i = 0; i < sizeof ABNORMAL_RESETS / sizeof ABNORMAL_RESETS[0]; i++) {
        if (strcmp(reset_reason, ABNORMAL_RESETS[i]) == 0) return true;
    }
    return false;
}

static void report(ota_health_keeper_t *keeper) {
    keeper->health.boots = keeper->counts.boots;
    keeper->health.abnormal_boots = keeper->counts.abnormal_boots;
    keeper->health.uptime_seconds = keeper->counts.uptime_seconds;
}

void ota_health_boot(ota_health_keeper_t *keeper, const ota_health_counts_t *saved, int64_t running_build, const char *reset_reason, bool reset_ended_a_trial) {
    memset(keeper, 0, sizeof *keeper);
    if (saved && saved->build == running_build && saved->abnormal_boots <= saved->boots) keeper->counts = *saved;
    keeper->counts.build = running_build;
    keeper->counts.boots++;
    if (ota_reset_reason_abnormal(reset_reason) && !reset_ended_a_trial) keeper->counts.abnormal_boots++;
    keeper->uptime_before = keeper->counts.uptime_seconds;
    keeper->health.reset_reason = reset_reason ? reset_reason : "unknown";
    keeper->health.min_free_heap = -1;
    report(keeper);
}

bool ota_health_update(ota_health_keeper_t *keeper, int64_t running_build, uint64_t seconds_into_boot, int64_t min_free_heap) {
    bool installed = running_build != keeper->counts.build;
    if (installed) {
        /* Installed and confirmed in this boot: the build's first boot is this one, from now. */
        keeper->counts = (ota_health_counts_t){.build = running_build, .boots = 1};
        keeper->uptime_before = 0;
        keeper->build_since_s = seconds_into_boot;
    }
    uint64_t on_build = seconds_into_boot > keeper->build_since_s ? seconds_into_boot - keeper->build_since_s : 0;
    keeper->counts.uptime_seconds = keeper->uptime_before + on_build;
    keeper->health.min_free_heap = min_free_heap;
    report(keeper);
    return installed;
}
