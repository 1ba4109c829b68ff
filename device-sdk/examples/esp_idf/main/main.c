/*
 * The OTA client in an ESP-IDF application: it checks, downloads with resume, verifies, installs,
 * reboots into the new image, and confirms it once this application's own health check passes.
 * Wi-Fi set-up is left to the application (see ESP-IDF's examples/common_components/protocol_examples_common).
 */
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "nvs_flash.h"

#include "ota_esp_idf.h"

/* The pinned release key: 32 raw bytes of the project's Ed25519 public key. */
static const uint8_t RELEASE_KEY[1][32] = {{0}};

/* The application's health check: what "this image works" means for this product. */
static bool health_check_passed(void) {
    return true;
}

void app_main(void) {
    ESP_ERROR_CHECK(nvs_flash_init());
    /* ... connect Wi-Fi here ... */
    static ota_esp_idf_t port;
    static ota_client_t client;
    ESP_ERROR_CHECK(ota_esp_idf_init(&port, NULL));
    const ota_config_t config = {
        .server_url = "https://ota.example.com",
        .token = "ota_prj_...",          /* a project token of `device` scope */
        .device_id = "a4cf12b03e01",     /* e.g. the MAC */
        .framework = "esp_idf",
        .chip_family = "esp32s3",
        .nvs_schema_version = -1,
        .signing_keys = RELEASE_KEY,
        .signing_key_count = 1,
        .chunk_bytes = CONFIG_OTA_CLIENT_CHUNK_BYTES,
        .trial_timeout_s = CONFIG_OTA_CLIENT_TRIAL_TIMEOUT_S,
        .poll_interval_s = CONFIG_OTA_CLIENT_POLL_INTERVAL_S,
        .ports = &port.ports,
    };
    ESP_ERROR_CHECK(ota_client_init(&client, &config) == OTA_OK ? ESP_OK : ESP_FAIL);
    for (;;) {
        uint32_t wait_ms = 0;
        ota_client_step(&client, &wait_ms);
        if (ota_client_in_trial(&client) && health_check_passed()) ota_client_confirm(&client);
        vTaskDelay(pdMS_TO_TICKS(wait_ms < 1000 ? (wait_ms ? wait_ms : 1) : 1000));
    }
}
