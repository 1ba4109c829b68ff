/*
 * The chip revision and the eFuse anti-rollback version the check reports (ota_esp_idf_chip_read
 * in include/ota_esp_idf.h). A file of its own: the eFuse headers it needs are the only ones of the
 * port that the ESP32-C3 header set in this repository's CI does not carry (device-sdk/README.md).
 */
#include "ota_esp_idf.h"

#include "esp_efuse.h"
#include "hal/efuse_hal.h"
#include "sdkconfig.h"

void ota_esp_idf_chip_read(ota_esp_idf_chip_t *chip) {
    chip->revision = (uint16_t)efuse_hal_chip_revision();
#if CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK
    chip->secure_version = esp_efuse_read_secure_version();
#else
    chip->secure_version = 0;
#endif
}
