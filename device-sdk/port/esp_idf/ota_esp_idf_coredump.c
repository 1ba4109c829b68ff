/*
 * The core dump port on ESP-IDF (include/ota_esp_idf.h): the dump espcoredump wrote to the core
 * dump partition after a panic, read with esp_partition_read (which decrypts an encrypted
 * partition) and erased with esp_core_dump_image_erase once the service has it.
 */
#include "ota_esp_idf.h"

#include "esp_partition.h"

#if defined(__has_include) && __has_include("esp_core_dump.h")
#include "esp_core_dump.h"
#else
/* espcoredump's image functions (esp_core_dump.h), which ESP-IDF builds whether or not core dumps
 * are configured; declared here only where that header is not on the include path. */
esp_err_t esp_core_dump_image_check(void);
esp_err_t esp_core_dump_image_get(size_t *out_addr, size_t *out_size);
esp_err_t esp_core_dump_image_erase(void);
#endif

static ota_err_t dump_size(void *ctx, uint32_t *size) {
    ota_esp_idf_coredump_t *dump = ctx;
    *size = 0;
    /* None, half-written (a power cut during the panic) or corrupt: nothing to send. */
    if (esp_core_dump_image_check() != ESP_OK) return OTA_OK;
    size_t address = 0, length = 0;
    if (esp_core_dump_image_get(&address, &length) != ESP_OK) return OTA_OK;
    dump->partition = esp_partition_find_first(ESP_PARTITION_TYPE_DATA, ESP_PARTITION_SUBTYPE_DATA_COREDUMP, NULL);
    if (!dump->partition || address < dump->partition->address || length > dump->partition->size - (address - dump->partition->address)) return OTA_ERR_IO;
    dump->start = (uint32_t)(address - dump->partition->address);
    *size = (uint32_t)length;
    return OTA_OK;
}

static ota_err_t dump_read(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    ota_esp_idf_coredump_t *dump = ctx;
    if (!dump->partition) return OTA_ERR_STATE;
    return esp_partition_read(dump->partition, dump->start + offset, data, len) == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t dump_erase(void *ctx) {
    (void)ctx;
    return esp_core_dump_image_erase() == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

const ota_coredump_port_t *ota_esp_idf_coredump_port(ota_esp_idf_coredump_t *dump) {
    dump->port = (ota_coredump_port_t){dump, dump_size, dump_read, dump_erase};
    dump->partition = NULL;
    dump->start = 0;
    return &dump->port;
}
