/*
 * The ESP-IDF port: esp_http_client for HTTP, esp_ota_ops (with CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE)
 * for the slots and the trial boot, NVS for the saved record, mbedTLS for SHA-256 and libsodium
 * for Ed25519, esp_timer, esp_random and esp_restart for the system. Glue only: every decision is
 * the core's (src/ota_client.c), tested on the linux port.
 *
 * The partition table needs otadata and two OTA app partitions (ota_0, ota_1); a factory partition
 * may sit beside them.
 *
 * Supported: ESP-IDF 5.4.2 and later 5.x releases. 5.4.0 and 5.4.1 lack esp_ota_resume, which a
 * resumed download needs; 6.x ships Mbed TLS 4, which has no mbedtls/sha256.h. With
 * CONFIG_MBEDTLS_CERTIFICATE_BUNDLE off, options.server_cert_pem is required for HTTPS.
 */
#ifndef OTA_ESP_IDF_H
#define OTA_ESP_IDF_H

#include "esp_idf_version.h"

/* The same range as idf_component.yml, said at the first line that would fail. */
#if ESP_IDF_VERSION < ESP_IDF_VERSION_VAL(5, 4, 2)
#error "the OTA client needs ESP-IDF 5.4.2 or later: esp_ota_resume arrived in 5.4.2"
#elif ESP_IDF_VERSION >= ESP_IDF_VERSION_VAL(6, 0, 0)
#error "the OTA client supports ESP-IDF 5.4.2 to 5.x: ESP-IDF 6 has no mbedtls/sha256.h (Mbed TLS 4)"
#endif

#include "esp_err.h"
#include "esp_http_client.h"
#include "esp_ota_ops.h"
#include "mbedtls/sha256.h"

#include "ota/ota_client.h"
#include "ota/ota_coredump.h"

/* An Arduino sketch is C++: without this its calls would name C++-mangled symbols that no object
 * defines. */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* PEM of the CA that signs the server's certificate; NULL uses the certificate bundle. It is
     * used for downloads too: where the service hands out presigned object-storage URLs, the
     * store's certificate must verify against it (docs/device-integration.md). */
    const char *server_cert_pem;
    /* No byte for this long breaks a download (ms). Default CONFIG_OTA_CLIENT_STALL_TIMEOUT_MS
     * (Kconfig), or 30000 where the component's Kconfig is not read (Arduino-ESP32). */
    int stall_timeout_ms;
    /* NVS namespace of the saved record. Default "ota_client". */
    const char *nvs_namespace;
} ota_esp_idf_options_t;

typedef struct {
    ota_esp_idf_options_t options;
    ota_ports_t ports;
    esp_http_client_handle_t get;
    ota_http_head_t head;       /* filled by header events while head_filling */
    bool head_filling;
    bool content_length_seen;
    const esp_partition_t *update_partition;
    esp_ota_handle_t ota_handle;
    uint32_t ota_next;          /* where esp_ota_write goes on: the only offset slot_write takes */
    bool ota_open;
} ota_esp_idf_t;

/* Fills port->ports for ota_config_t.ports. Call nvs_flash_init() first. */
esp_err_t ota_esp_idf_init(ota_esp_idf_t *port, const ota_esp_idf_options_t *options);

/*
 * Device health (ota/ota_health.h) for the check, kept in NVS beside the record: each boot counted
 * with esp_reset_reason(), the uptime from esp_timer, the lowest free heap from
 * esp_get_minimum_free_heap_size(). Point ota_config_t.health at `keeper.health`.
 */
typedef struct {
    ota_health_keeper_t keeper;
    const char *nvs_namespace;
    uint64_t saved_at_s;        /* seconds into this boot of the last save */
} ota_esp_idf_health_t;

/* Counts this boot; call once, after ota_client_init. NULL namespace: "ota_client". */
esp_err_t ota_esp_idf_health_start(ota_esp_idf_health_t *health, const ota_client_t *client, const char *nvs_namespace);

/* Brings the report up to now; call before each ota_client_step. Saves the counts after an install
 * and every 10 minutes, so that a crash loses at most that much uptime. */
void ota_esp_idf_health_update(ota_esp_idf_health_t *health, const ota_client_t *client);

/*
 * What the bootloader checks of an image (docs/api.md, "The image"), for the check: point
 * ota_config_t.chip_revision at `revision` and, when CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK is on,
 * ota_config_t.secure_version at `secure_version`. The service then never offers a build the
 * bootloader would refuse for either.
 */
typedef struct {
    uint16_t revision;          /* efuse_hal_chip_revision(): major * 100 + minor */
    uint32_t secure_version;    /* esp_efuse_read_secure_version(); 0 with anti-rollback off */
} ota_esp_idf_chip_t;

/* Reads both from the eFuses; call before each ota_client_step, as confirming an image with
 * anti-rollback on raises the eFuse secure version (it lives in ota_esp_idf_chip.c). */
void ota_esp_idf_chip_read(ota_esp_idf_chip_t *chip);

/*
 * The core dump ESP-IDF wrote to its flash partition after a panic (CONFIG_ESP_COREDUMP_ENABLE_TO_FLASH),
 * for ota_coredump_begin (ota/ota_coredump.h): a dump whose checksum esp_core_dump_image_check does
 * not pass counts as none; erasing is esp_core_dump_image_erase. In ota_esp_idf_coredump.c.
 */
typedef struct {
    ota_coredump_port_t port;
    const esp_partition_t *partition;
    uint32_t start;             /* where the dump starts in the partition */
} ota_esp_idf_coredump_t;

const ota_coredump_port_t *ota_esp_idf_coredump_port(ota_esp_idf_coredump_t *dump);

#ifdef __cplusplus
}
#endif

#endif
