/*
 * The ESP-IDF port. Each function maps one port call onto the ESP-IDF call that does it; see
 * include/ota_esp_idf.h for what the device needs.
 */
#include "ota_esp_idf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "esp_log.h"
#include "esp_random.h"
#include "esp_system.h"
#include "esp_timer.h"
#include "nvs.h"
#include "sodium.h"

#include "ota_sodium_ed25519.h"

#if CONFIG_MBEDTLS_CERTIFICATE_BUNDLE
#include "esp_crt_bundle.h"
#define OTA_CRT_BUNDLE_ATTACH esp_crt_bundle_attach
#else
#define OTA_CRT_BUNDLE_ATTACH NULL /* then options.server_cert_pem is required */
#endif

/* The component's Kconfig (device-sdk/Kconfig) is read by ESP-IDF's build only; Arduino-ESP32
 * compiles the library against its own prebuilt sdkconfig.h, which has no OTA_CLIENT option. */
#ifndef CONFIG_OTA_CLIENT_STALL_TIMEOUT_MS
#define CONFIG_OTA_CLIENT_STALL_TIMEOUT_MS 30000
#endif

/*
 * esp_http_client sends the request line and the headers from its transmit buffer, 512 bytes by
 * default: too small for a download URL of up to OTA_URL_MAX characters. Room for the URL and for
 * the method, version, Host, User-Agent, Authorization (up to 320), Range and If-Range headers.
 */
#define OTA_ESP_IDF_TX_BUFFER (OTA_URL_MAX + 1024)

static const char *TAG = "ota";

/* ---- HTTP ---- */

static void head_reset(ota_http_head_t *head) {
    memset(head, 0, sizeof *head);
    head->content_length = head->range_start = head->total_size = -1;
}

/*
 * Response headers arrive as events, into the port's own head: the client may deliver one after the
 * call that asked for the head returned (trailers of a chunked answer), so the port never keeps a
 * pointer to the caller's head. The call copies its head out when the headers are complete.
 */
static esp_err_t on_http_event(esp_http_client_event_t *event) {
    ota_esp_idf_t *port = event->user_data;
    if (event->event_id != HTTP_EVENT_ON_HEADER || !port->head_filling) return ESP_OK;
    ota_http_head_t *head = &port->head;
    const char *key = event->header_key, *value = event->header_value;
    if (strcasecmp(key, "Content-Length") == 0) {
        port->content_length_seen = true;
    } else if (strcasecmp(key, "ETag") == 0) {
        strlcpy(head->etag, value, sizeof head->etag);
    } else if (strcasecmp(key, "Retry-After") == 0) {
        head->retry_after_s = (uint32_t)strtoul(value, NULL, 10);
    } else if (strcasecmp(key, "Content-Range") == 0 && strncmp(value, "bytes ", 6) == 0) {
        const char *slash = strchr(value, '/');
        if (slash) head->total_size = strtoll(slash + 1, NULL, 10);
        if (value[6] >= '0' && value[6] <= '9') head->range_start = strtoll(value + 6, NULL, 10);
    }
    return ESP_OK;
}

static esp_http_client_handle_t new_client(ota_esp_idf_t *port, const char *url, esp_http_client_method_t method, int timeout_ms) {
    esp_http_client_config_t config = {
        .url = url,
        .method = method,
        .timeout_ms = timeout_ms,
        .event_handler = on_http_event,
        .user_data = port,
        .cert_pem = port->options.server_cert_pem,
        .crt_bundle_attach = port->options.server_cert_pem ? NULL : OTA_CRT_BUNDLE_ATTACH,
        .disable_auto_redirect = true,
        .buffer_size_tx = OTA_ESP_IDF_TX_BUFFER,
    };
    return esp_http_client_init(&config);
}

/* Starts filling the port's head for a new request. */
static void head_open(ota_esp_idf_t *port) {
    head_reset(&port->head);
    port->content_length_seen = false;
    port->head_filling = true;
}

/* The head as the headers left it, for the caller; later header events change nothing it holds. */
static void head_close(ota_esp_idf_t *port, ota_http_head_t *out) {
    port->head_filling = false;
    *out = port->head;
}

/* POSTs `len` bytes of `body` as `content_type`; the answer's body into resp, its head into head. */
static ota_err_t post(ota_esp_idf_t *port, const char *url, const char *bearer, const char *content_type, const char *body, int length, char *resp,
                      size_t resp_cap, ota_http_head_t *head) {
    head_reset(head);
    head_open(port);
    esp_http_client_handle_t client = new_client(port, url, HTTP_METHOD_POST, 30000);
    if (!client) return OTA_ERR_IO;
    char authorization[320];
    snprintf(authorization, sizeof authorization, "Bearer %s", bearer);
    esp_http_client_set_header(client, "Authorization", authorization);
    esp_http_client_set_header(client, "Content-Type", content_type);
    ota_err_t result = OTA_ERR_IO;
    if (esp_http_client_open(client, length) == ESP_OK && esp_http_client_write(client, body, length) == length &&
        esp_http_client_fetch_headers(client) >= 0) {
        int total = 0, n;
        while ((n = esp_http_client_read(client, resp + total, (int)resp_cap - 1 - total)) > 0) total += n;
        resp[total] = '\0';
        port->head.status = esp_http_client_get_status_code(client);
        result = n < 0 ? OTA_ERR_IO : !esp_http_client_is_complete_data_received(client) ? OTA_ERR_NO_SPACE : OTA_OK;
    }
    head_close(port, head);
    esp_http_client_close(client);
    esp_http_client_cleanup(client);
    return result;
}

static ota_err_t post_json(void *ctx, const char *url, const char *bearer, const char *body, char *resp, size_t resp_cap, ota_http_head_t *head) {
    return post(ctx, url, bearer, "application/json", body, (int)strlen(body), resp, resp_cap, head);
}

static ota_err_t post_bytes(void *ctx, const char *url, const char *bearer, const uint8_t *body, size_t len, char *resp, size_t resp_cap,
                            ota_http_head_t *head) {
    return post(ctx, url, bearer, "application/octet-stream", (const char *)body, (int)len, resp, resp_cap, head);
}

static void get_close(void *ctx) {
    ota_esp_idf_t *port = ctx;
    if (port->get) {
        esp_http_client_close(port->get);
        esp_http_client_cleanup(port->get);
    }
    port->get = NULL;
    port->head_filling = false;
}

static ota_err_t get_open(void *ctx, const char *url, uint32_t range_start, const char *if_range, ota_http_head_t *head) {
    ota_esp_idf_t *port = ctx;
    get_close(port);
    head_reset(head);
    head_open(port);
    port->get = new_client(port, url, HTTP_METHOD_GET, port->options.stall_timeout_ms);
    if (!port->get) return OTA_ERR_IO;
    char range[32];
    if (range_start > 0) {
        snprintf(range, sizeof range, "bytes=%lu-", (unsigned long)range_start);
        esp_http_client_set_header(port->get, "Range", range);
    }
    if (if_range && *if_range) esp_http_client_set_header(port->get, "If-Range", if_range);
    if (esp_http_client_open(port->get, 0) != ESP_OK) return OTA_ERR_IO;
    int64_t length = esp_http_client_fetch_headers(port->get);
    if (length < 0) return OTA_ERR_IO;
    /* esp_http_client answers 0 for an absent Content-Length; the port contract says -1. */
    port->head.content_length = port->content_length_seen && !esp_http_client_is_chunked_response(port->get) ? length : -1;
    port->head.status = esp_http_client_get_status_code(port->get);
    head_close(port, head);
    return OTA_OK;
}

static ota_err_t get_read(void *ctx, uint8_t *buf, size_t cap, size_t *n) {
    ota_esp_idf_t *port = ctx;
    *n = 0;
    if (!port->get) return OTA_ERR_STATE;
    int got = esp_http_client_read(port->get, (char *)buf, (int)cap);
    if (got < 0) return OTA_ERR_IO;
    /* 0 before the whole body arrived is a connection that ended early or stalled. */
    if (got == 0 && !esp_http_client_is_complete_data_received(port->get)) return OTA_ERR_IO;
    *n = (size_t)got;
    return OTA_OK;
}

/* ---- slots ---- */

/* Slot numbers as the core counts them: ota_1 is 1; ota_0 and a factory app are 0 and 1 so that the
 * slot after the running one is always the partition esp_ota_get_next_update_partition returns. */
static uint8_t slot_of(const esp_partition_t *partition) {
    if (partition->subtype == ESP_PARTITION_SUBTYPE_APP_OTA_1) return 1;
    if (partition->subtype == ESP_PARTITION_SUBTYPE_APP_OTA_0) return 0;
    return 1; /* factory: the next update goes to ota_0 */
}

static ota_err_t boot_info(void *ctx, ota_boot_info_t *info) {
    (void)ctx;
    const esp_partition_t *running = esp_ota_get_running_partition();
    if (!running) return OTA_ERR_IO;
    esp_ota_img_states_t state = ESP_OTA_IMG_VALID;
    if (esp_ota_get_state_partition(running, &state) != ESP_OK) state = ESP_OTA_IMG_VALID;
    info->running_slot = slot_of(running);
    info->pending_verify = state == ESP_OTA_IMG_PENDING_VERIFY;
    return OTA_OK;
}

static ota_err_t slot_open(void *ctx, uint32_t image_size, uint32_t resume_offset) {
    ota_esp_idf_t *port = ctx;
    (void)image_size;
    if (port->ota_open) esp_ota_abort(port->ota_handle);
    port->ota_open = false;
    port->update_partition = esp_ota_get_next_update_partition(NULL);
    if (!port->update_partition) return OTA_ERR_IO;
    if (image_size > port->update_partition->size) return OTA_ERR_NO_SPACE;
    /* Sequential writes erase each sector as it is first written; a resume starts on a sector. */
    esp_err_t err = resume_offset == 0 ? esp_ota_begin(port->update_partition, OTA_WITH_SEQUENTIAL_WRITES, &port->ota_handle)
                                       : esp_ota_resume(port->update_partition, OTA_WITH_SEQUENTIAL_WRITES, resume_offset, &port->ota_handle);
    port->ota_open = err == ESP_OK;
    port->ota_next = resume_offset;
    return err == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t slot_write(void *ctx, uint32_t offset, const uint8_t *data, size_t len) {
    ota_esp_idf_t *port = ctx;
    /* esp_ota_write appends from where the slot was opened: a write anywhere else would land at the
     * wrong place, so it is refused (the core opens the slot again to start over). */
    if (!port->ota_open || offset != port->ota_next) return OTA_ERR_STATE;
    if (esp_ota_write(port->ota_handle, data, len) != ESP_OK) return OTA_ERR_IO;
    port->ota_next += (uint32_t)len;
    return OTA_OK;
}

static ota_err_t slot_read(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    ota_esp_idf_t *port = ctx;
    if (!port->update_partition) port->update_partition = esp_ota_get_next_update_partition(NULL);
    return port->update_partition && esp_partition_read(port->update_partition, offset, data, len) == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

/* The base of a delta patch: the partition the app runs from, read as it is in flash (decrypted
 * when flash encryption is on, as esp_partition_read does for an encrypted partition). */
static ota_err_t slot_read_running(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    (void)ctx;
    const esp_partition_t *running = esp_ota_get_running_partition();
    if (!running) return OTA_ERR_IO;
    if ((uint64_t)offset + len > running->size) return OTA_ERR_INVALID_ARG;
    return esp_partition_read(running, offset, data, len) == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t slot_flush(void *ctx) {
    /* esp_ota_write writes flash directly; at a chunk boundary (whole sectors) nothing is held back. */
    (void)ctx;
    return OTA_OK;
}

static ota_err_t slot_finish(void *ctx) {
    ota_esp_idf_t *port = ctx;
    if (!port->ota_open) return OTA_ERR_STATE;
    port->ota_open = false;
    return esp_ota_end(port->ota_handle) == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t slot_activate(void *ctx) {
    ota_esp_idf_t *port = ctx;
    if (!port->update_partition) port->update_partition = esp_ota_get_next_update_partition(NULL);
    return port->update_partition && esp_ota_set_boot_partition(port->update_partition) == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t slot_mark_valid(void *ctx) {
    (void)ctx;
    return esp_ota_mark_app_valid_cancel_rollback() == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t slot_rollback(void *ctx) {
    (void)ctx;
    /* Reboots into the previous app when it succeeds. */
    esp_ota_mark_app_invalid_rollback_and_reboot();
    return OTA_ERR_IO;
}

/* ---- the saved record: one NVS blob, which NVS replaces atomically ---- */

static ota_err_t state_load(void *ctx, void *buf, size_t cap, size_t *len) {
    ota_esp_idf_t *port = ctx;
    nvs_handle_t nvs;
    *len = 0;
    esp_err_t err = nvs_open(port->options.nvs_namespace, NVS_READONLY, &nvs);
    if (err == ESP_ERR_NVS_NOT_FOUND) return OTA_OK;
    if (err != ESP_OK) return OTA_ERR_IO;
    size_t size = cap;
    err = nvs_get_blob(nvs, "record", buf, &size);
    nvs_close(nvs);
    if (err == ESP_ERR_NVS_NOT_FOUND) return OTA_OK;
    if (err == ESP_ERR_NVS_INVALID_LENGTH) {
        *len = cap + 1; /* not ours: the core starts clean */
        return OTA_OK;
    }
    if (err != ESP_OK) return OTA_ERR_IO;
    *len = size;
    return OTA_OK;
}

static ota_err_t state_save(void *ctx, const void *buf, size_t len) {
    ota_esp_idf_t *port = ctx;
    nvs_handle_t nvs;
    if (nvs_open(port->options.nvs_namespace, NVS_READWRITE, &nvs) != ESP_OK) return OTA_ERR_IO;
    esp_err_t err = nvs_set_blob(nvs, "record", buf, len);
    if (err == ESP_OK) err = nvs_commit(nvs);
    nvs_close(nvs);
    return err == ESP_OK ? OTA_OK : OTA_ERR_IO;
}

/* ---- crypto ---- */

static void sha256_init(void *state) {
    mbedtls_sha256_init(state);
    mbedtls_sha256_starts(state, 0);
}

static void sha256_update(void *state, const uint8_t *data, size_t len) {
    mbedtls_sha256_update(state, data, len);
}

static void sha256_final(void *state, uint8_t digest[32]) {
    mbedtls_sha256_finish(state, digest);
    mbedtls_sha256_free(state);
}

/* ---- system ---- */

static uint64_t now_ms(void *ctx) {
    (void)ctx;
    return (uint64_t)(esp_timer_get_time() / 1000);
}

static uint32_t random32(void *ctx) {
    (void)ctx;
    return esp_random();
}

static void reboot(void *ctx) {
    (void)ctx;
    esp_restart();
}

static void log_line(void *ctx, ota_log_level_t level, const char *message) {
    (void)ctx;
    switch (level) {
    case OTA_LOG_ERROR: ESP_LOGE(TAG, "%s", message); break;
    case OTA_LOG_WARN: ESP_LOGW(TAG, "%s", message); break;
    case OTA_LOG_INFO: ESP_LOGI(TAG, "%s", message); break;
    case OTA_LOG_DEBUG: ESP_LOGD(TAG, "%s", message); break;
    }
}

#ifdef ARDUINO
/*
 * Arduino-ESP32 3.x's initArduino() marks a new image valid before setup() unless the application
 * answers true here (the core's weak default answers false): the bootloader would then never roll
 * back an image that crashes before the client confirms it. The client confirms an image itself,
 * once the application's health check passes, so the library keeps the trial. It lives in this
 * file because every sketch links it (ota_esp_idf_init): a definition alone in an archive member
 * would not be pulled in over the core's weak one. An application must not define its own.
 */
bool verifyRollbackLater(void);
bool verifyRollbackLater(void) {
    return true;
}
#endif

esp_err_t ota_esp_idf_init(ota_esp_idf_t *port, const ota_esp_idf_options_t *options) {
    memset(port, 0, sizeof *port);
    if (options) port->options = *options;
    if (!port->options.stall_timeout_ms) port->options.stall_timeout_ms = CONFIG_OTA_CLIENT_STALL_TIMEOUT_MS;
    if (!port->options.nvs_namespace) port->options.nvs_namespace = "ota_client";
    if (sodium_init() < 0) return ESP_FAIL;
    port->ports.http = (ota_http_port_t){port, post_json, get_open, get_read, get_close, post_bytes};
    port->ports.slot = (ota_slot_port_t){port,          boot_info,     slot_open,       slot_write,    slot_read,        slot_flush,
                                         slot_finish,   slot_activate, slot_mark_valid, slot_rollback, slot_read_running};
    port->ports.state = (ota_state_port_t){port, state_load, state_save};
    port->ports.crypto = (ota_crypto_port_t){
        .ctx = port,
        .sha256_state_size = sizeof(mbedtls_sha256_context),
        .ed25519_state_size = sizeof(crypto_hash_sha512_state),
        .sha256_init = sha256_init,
        .sha256_update = sha256_update,
        .sha256_final = sha256_final,
        .ed25519_init = ota_sodium_ed25519_init,
        .ed25519_update = ota_sodium_ed25519_update,
        .ed25519_final = ota_sodium_ed25519_final,
    };
    port->ports.system = (ota_system_port_t){port, now_ms, random32, reboot, log_line};
    return ESP_OK;
}

/* ---- device health ---- */

/* Seconds between two saves of the uptime: a crash loses at most this much of it. NVS spreads its
 * writes over its pages; a 24-byte blob every 10 minutes is far inside a flash sector's life. */
#define OTA_ESP_IDF_HEALTH_SAVE_S 600u

/* esp_reset_reason() as the service names it (docs/api.md, "Device health"). */
static const char *reset_reason_name(esp_reset_reason_t reason) {
    switch (reason) {
    case ESP_RST_POWERON: return "power_on";
    case ESP_RST_EXT: return "external";
    case ESP_RST_SW: return "software";
    case ESP_RST_PANIC: return "panic";
    case ESP_RST_INT_WDT: return "int_watchdog";
    case ESP_RST_TASK_WDT: return "task_watchdog";
    case ESP_RST_WDT: return "watchdog";
    case ESP_RST_DEEPSLEEP: return "deep_sleep";
    case ESP_RST_BROWNOUT: return "brownout";
    case ESP_RST_SDIO: return "sdio";
    case ESP_RST_USB: return "usb";
    case ESP_RST_JTAG: return "jtag";
    case ESP_RST_EFUSE: return "efuse";
    case ESP_RST_PWR_GLITCH: return "power_glitch";
    case ESP_RST_CPU_LOCKUP: return "cpu_lockup";
    default: return "unknown";
    }
}

static void health_save(ota_esp_idf_health_t *health) {
    nvs_handle_t nvs;
    if (nvs_open(health->nvs_namespace, NVS_READWRITE, &nvs) != ESP_OK) return;
    if (nvs_set_blob(nvs, "health", &health->keeper.counts, sizeof health->keeper.counts) == ESP_OK) nvs_commit(nvs);
    nvs_close(nvs);
    health->saved_at_s = (uint64_t)(esp_timer_get_time() / 1000000);
}

esp_err_t ota_esp_idf_health_start(ota_esp_idf_health_t *health, const ota_client_t *client, const char *nvs_namespace) {
    memset(health, 0, sizeof *health);
    health->nvs_namespace = nvs_namespace ? nvs_namespace : "ota_client";
    ota_health_counts_t saved;
    size_t size = sizeof saved;
    bool loaded = false;
    nvs_handle_t nvs;
    if (nvs_open(health->nvs_namespace, NVS_READONLY, &nvs) == ESP_OK) {
        loaded = nvs_get_blob(nvs, "health", &saved, &size) == ESP_OK && size == sizeof saved;
        nvs_close(nvs);
    }
    ota_health_boot(&health->keeper, loaded ? &saved : NULL, ota_client_running_build(client), reset_reason_name(esp_reset_reason()), ota_client_booted_after_rollback(client));
    health_save(health);
    return ESP_OK;
}

void ota_esp_idf_health_update(ota_esp_idf_health_t *health, const ota_client_t *client) {
    uint64_t seconds = (uint64_t)(esp_timer_get_time() / 1000000);
    bool installed = ota_health_update(&health->keeper, ota_client_running_build(client), seconds, (int64_t)esp_get_minimum_free_heap_size());
    if (installed || seconds - health->saved_at_s >= OTA_ESP_IDF_HEALTH_SAVE_S) health_save(health);
}
