/*
 * How the device has run since it installed the build it runs (docs/api.md, "Device health"): what
 * the check reports for the deployments that watch device health, so that a build that installs,
 * confirms and then crashes is paused before it reaches the fleet.
 *
 * The counts must survive reboots, which is the port's business (the ESP-IDF port keeps them in
 * NVS: ota_esp_idf_health_start and _update; the linux device in a file). The core counts: one
 * ota_health_keeper_t per device, ota_health_boot once per boot, ota_health_update before each
 * step, and ota_config_t.health pointing at keeper.health.
 */
#ifndef OTA_HEALTH_H
#define OTA_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a check reports. */
typedef struct {
    /* Why the device last reset, as esp_reset_reason() names it, lowercased without ESP_RST_
     * ("power_on", "software", "panic", "task_watchdog", "brownout", ...). */
    const char *reset_reason;
    uint32_t boots;             /* boots since the install, the first included; 0: nothing is reported */
    uint32_t abnormal_boots;    /* of those, the ones after a panic, a watchdog, a brownout or a CPU lockup */
    uint64_t uptime_seconds;    /* run since the install, summed over those boots */
    int64_t min_free_heap;      /* the lowest free heap since boot, in bytes; < 0: not reported */
} ota_health_t;

/* What the port saves across boots: 24 bytes, the same layout on 32 and 64 bits. */
typedef struct {
    int64_t build;              /* the build_number the counts are of */
    uint32_t boots;
    uint32_t abnormal_boots;
    uint64_t uptime_seconds;    /* run in the boots before this one, and in this one up to the last update */
} ota_health_counts_t;

typedef struct {
    ota_health_counts_t counts; /* save these after ota_health_boot, and when ota_health_update says so */
    ota_health_t health;        /* what the check reports: point ota_config_t.health here */
    uint64_t uptime_before;     /* counts.uptime_seconds before this boot's time on the build */
    uint64_t build_since_s;     /* seconds into this boot when the running build began (an install in this boot) */
} ota_health_keeper_t;

/* Whether a reset reason counts against a build: a panic, a watchdog, a brownout, a CPU lockup. */
bool ota_reset_reason_abnormal(const char *reset_reason);

/*
 * Counts this boot, once per boot after ota_client_init: `saved` as the port loaded it (NULL when
 * none was ever saved), the build that runs (ota_client_running_build) and why the device reset.
 * Counts of another build start afresh: the device installed this one since. With
 * `reset_ended_a_trial` (ota_client_booted_after_rollback), the reset ended a trial the bootloader
 * then abandoned: it is the trial build's, which the service counts from the rolled_back report,
 * so it is no abnormal boot of the build the device went back to. `reset_reason` must outlive the
 * keeper (a string literal).
 */
void ota_health_boot(ota_health_keeper_t *keeper, const ota_health_counts_t *saved, int64_t running_build, const char *reset_reason, bool reset_ended_a_trial);

/*
 * Brings the report to `seconds_into_boot` (a monotonic clock since boot) with the lowest free heap
 * (< 0: unknown), for the build that runs now: one installed and confirmed in this boot starts its
 * counts here, with this boot as its first. True when that happened, and the counts should be
 * saved now; the port saves them now and then as well, so that a crash loses little uptime.
 */
bool ota_health_update(ota_health_keeper_t *keeper, int64_t running_build, uint64_t seconds_into_boot, int64_t min_free_heap);

#ifdef __cplusplus
}
#endif

#endif /* OTA_HEALTH_H */
