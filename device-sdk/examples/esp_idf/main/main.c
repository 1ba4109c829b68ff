/*
 * The OTA client in an ESP-IDF application: it checks, downloads with resume, verifies, installs,
 * reboots into the new image, and confirms it once this application's own health check passes.
 * Wi-Fi set-up is left to the application (see ESP-IDF's examples/common_components/protocol_examples_common).
 */
#include <string.h>

#include "esp_log.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "nvs_flash.h"
#include "sodium.h"

#include "ota_esp_idf.h"

/* ESP-IDF calls it; no header of ESP-IDF's declares it. */
void app_main(void);

/* This image's build number as the service numbers it (CI passes it, e.g.
 * `idf.py build -DOTA_BUILD_NUMBER=42` with `add_compile_definitions` in the project): what the
 * device reports when no saved state says what runs. */
#ifndef OTA_BUILD_NUMBER
#define OTA_BUILD_NUMBER 0
#endif

/*
 * The project's Ed25519 release key, as `public_key` of GET /api/v1/projects/{id}/signing-keys/
 * shows it (base64 of 32 bytes). With require_signature below, an offer that is unsigned, or signed
 * by any other key, is refused (signature_invalid): a stolen token or a compromised store cannot
 * install an image this key did not sign.
 */
static const char RELEASE_PUBLIC_KEY_BASE64[] = "REPLACE-with-your-project's-signing-key";

static bool decode_release_key(uint8_t key[32]) {
    size_t length = 0;
    return sodium_base642bin(key, 32, RELEASE_PUBLIC_KEY_BASE64, strlen(RELEASE_PUBLIC_KEY_BASE64), NULL, &length, NULL,
                             sodium_base64_VARIANT_ORIGINAL) == 0 &&
           length == 32;
}

/* The application's health check: what "this image works" means for this product. */
static bool health_check_passed(void) {
    return true;
}

/*
 * The client runs in a task of its own: its TLS handshake (mbedTLS, with the certificate bundle)
 * needs more stack than ESP-IDF's main task has (CONFIG_ESP_MAIN_TASK_STACK_SIZE, 3,584 bytes by
 * default). ESP-IDF's own OTA examples give theirs 8 KB; so does this one, and it logs the least
 * stack the task has had left each time that falls, for the application to size it by.
 */
#define OTA_TASK_STACK_BYTES 8192
#define OTA_TASK_PRIORITY 5

static void ota_task(void *arg);

void app_main(void) {
    ESP_ERROR_CHECK(nvs_flash_init());
    /* ... connect Wi-Fi here ... */
    if (xTaskCreate(ota_task, "ota_client", OTA_TASK_STACK_BYTES, NULL, OTA_TASK_PRIORITY, NULL) != pdPASS) {
        ESP_LOGE("ota_example", "the OTA task could not be created: updates are off");
    }
}

static void ota_task(void *arg) {
    (void)arg;
    static ota_esp_idf_t port;
    static ota_client_t client;
    static ota_esp_idf_health_t health;
    static ota_esp_idf_chip_t chip;
    ESP_ERROR_CHECK(ota_esp_idf_init(&port, NULL));
    ota_esp_idf_chip_read(&chip);
    static uint8_t release_key[1][32];
    if (!decode_release_key(release_key[0])) {
        /* Never update without the pinned key: a placeholder left in place stops here. */
        ESP_LOGE("ota_example", "RELEASE_PUBLIC_KEY_BASE64 is not a 32-byte base64 key: updates are off");
        vTaskDelete(NULL);
        return;
    }
    const ota_config_t config = {
        .server_url = "https://ota.example.com",
        .token = "ota_prj_...",          /* a project token of `device` scope */
        .device_id = "a4cf12b03e01",     /* e.g. the MAC */
        .framework = "esp_idf",
        .chip_family = CONFIG_IDF_TARGET, /* the target this image was built for: esp32c3, esp32s3, ... */
        .nvs_schema_version = -1,
        .factory_build_number = OTA_BUILD_NUMBER,
        .signing_keys = (const uint8_t(*)[32])release_key,
        .signing_key_count = 1,
        .require_signature = true,
        .chunk_bytes = CONFIG_OTA_CLIENT_CHUNK_BYTES,
        .trial_timeout_s = CONFIG_OTA_CLIENT_TRIAL_TIMEOUT_S,
        .poll_interval_s = CONFIG_OTA_CLIENT_POLL_INTERVAL_S,
        /* Delta patches from the image that runs, from the first update this client installed on
         * (set factory_image_sha256 to the factory image's SHA-256 to start from that one). */
        .apply_deltas = true,
        /* How this device runs since its install (resets, uptime, heap), for deployments that
         * pause a build whose devices crash more than the rest of the fleet. */
        .health = &health.keeper.health,
        /* What the bootloader checks, so that no build it would refuse is offered: the chip
         * revision, and the eFuse anti-rollback version when anti-rollback is on. */
        .chip_revision = &chip.revision,
#if CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK
        .secure_version = &chip.secure_version,
#endif
        .ports = &port.ports,
    };
    ESP_ERROR_CHECK(ota_client_init(&client, &config) == OTA_OK ? ESP_OK : ESP_FAIL);
    ESP_ERROR_CHECK(ota_esp_idf_health_start(&health, &client, NULL));
    /* The core dump of the last panic, if the flash holds one (CONFIG_ESP_COREDUMP_ENABLE_TO_FLASH),
     * goes to the service a piece at a time beside the client's steps, and is erased once the
     * service has it whole (ota/ota_coredump.h). */
    static ota_esp_idf_coredump_t dump;
    static ota_coredump_sender_t sender;
    bool sending = ota_coredump_begin(&sender, &config, ota_esp_idf_coredump_port(&dump)) == OTA_OK && ota_coredump_outcome(&sender) == OTA_COREDUMP_PENDING;
    uint64_t dump_step_at = 0;
    UBaseType_t least_left = (UBaseType_t)-1;
    for (;;) {
        uint32_t wait_ms = 0;
        ota_esp_idf_health_update(&health, &client);
        ota_esp_idf_chip_read(&chip);
        ota_client_step(&client, &wait_ms);
        if (ota_client_in_trial(&client) && health_check_passed()) ota_client_confirm(&client);
        uint64_t now_ms = (uint64_t)(esp_timer_get_time() / 1000);
        if (sending && now_ms >= dump_step_at) {
            uint32_t dump_wait_ms = 0;
            sending = ota_coredump_step(&sender, &dump_wait_ms) == OTA_OK && ota_coredump_outcome(&sender) == OTA_COREDUMP_PENDING;
            dump_step_at = now_ms + dump_wait_ms;
            if (sending && dump_wait_ms < wait_ms) wait_ms = dump_wait_ms;
        }
        /* ESP-IDF counts a task's stack in bytes: this is the least it has had free. */
        UBaseType_t left = uxTaskGetStackHighWaterMark(NULL);
        if (left < least_left) {
            least_left = left;
            ESP_LOGI("ota_example", "OTA task stack: at least %u of %u bytes left so far", (unsigned)left, (unsigned)OTA_TASK_STACK_BYTES);
        }
        /* At least one tick, whatever CONFIG_FREERTOS_HZ: pdMS_TO_TICKS(1) is 0 at 100 Hz. */
        vTaskDelay(ota_client_wait_ticks(wait_ms < 1000 ? wait_ms : 1000, configTICK_RATE_HZ));
    }
}
