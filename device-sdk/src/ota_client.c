/*
 * The update state machine. The saved phase (ota_phase_t) says where an update stands across power
 * cuts; every transition saves the whole record before it acts on the world, so that a cut at any
 * instant leaves a record the next boot can resume from or cleanly abandon:
 *
 *   IDLE --offer--> DOWNLOADING --whole, verified--> ACTIVATING --boot switched--> REBOOTING
 *   REBOOTING --booted the new slot--> TRIAL --confirm--> IDLE (confirmed)
 *   TRIAL --timeout or reject--> IDLE (rolled_back), then the previous slot boots
 *   REBOOTING or TRIAL --booted the old slot--> IDLE (rolled_back, boot_failed)
 *   DOWNLOADING --bad bytes, bad signature, no progress--> IDLE (failed, with its reason)
 *
 * Terminal events (confirmed, failed, rolled_back) are saved as "pending" and sent until the
 * server accepts them; the events in between are sent once, as they happen.
 *
 * A download is the build's image, or a delta patch from the running image that the applier
 * (ota_delta.c) turns into the image as it arrives; either way the slot ends up holding the image,
 * hashed and verified the same. A patch that fails falls back to the image, as no failure.
 */
#include "ota/ota_client.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_scan.h"
#include "ota_chunk.h"
#include "ota_record.h"
#include "ota_internal.h"

#define SECTOR_BYTES 4096u
#define ENDPOINT_MAX 256

/* ---- small helpers ---- */

static uint64_t now_ms(const ota_client_t *c) {
    return c->config.ports->system.now_ms(c->config.ports->system.ctx);
}

void ota_vlog(const ota_config_t *config, ota_log_level_t level, const char *format, va_list args) {
    const ota_system_port_t *system = &config->ports->system;
    if (!system->log) return;
    char line[192];
    vsnprintf(line, sizeof line, format, args);
    system->log(system->ctx, level, line);
}

static void log_line(const ota_client_t *c, ota_log_level_t level, const char *format, ...) {
    va_list args;
    va_start(args, format);
    ota_vlog(&c->config, level, format, args);
    va_end(args);
}

/*
 * The decimal text of `value`. newlib-nano's printf (CONFIG_NEWLIB_NANO_FORMAT, common on ESP32)
 * has no 64-bit conversions (it prints "ld" for a long long), so 64-bit numbers reach printf as text.
 */
typedef struct {
    char text[21];
} int64_text_t;

static int64_text_t int64_text(int64_t value) {
    int64_text_t out;
    char digits[19 + 1];
    size_t count = 0, len = 0;
    bool negative = value < 0;
    /* Digit by digit from the signed value, so INT64_MIN needs no larger type. */
    do {
        int digit = (int)(value % 10);
        digits[count++] = (char)('0' + (digit < 0 ? -digit : digit));
        value /= 10;
    } while (value != 0);
    if (negative) out.text[len++] = '-';
    while (count > 0) out.text[len++] = digits[--count];
    out.text[len] = '\0';
    return out;
}

/* The delay before retry number `failures` (1, 2, ...): retry_base_ms doubled per failure up to
 * retry_max_ms, spread by +-20%; the server's Retry-After wins when it sent one, up to
 * OTA_RETRY_AFTER_MAX_S (so that its milliseconds fit 32 bits). */
uint32_t ota_backoff_ms(const ota_config_t *config, uint32_t failures, uint32_t retry_after_s) {
    uint64_t delay = config->retry_base_ms;
    for (uint32_t i = 1; i < failures && delay < config->retry_max_ms; i++) delay *= 2;
    if (delay > config->retry_max_ms) delay = config->retry_max_ms;
    uint32_t random = config->ports->system.random(config->ports->system.ctx);
    delay = delay * (80u + random % 41u) / 100u;
    if (retry_after_s > 0) delay = (uint64_t)(retry_after_s < OTA_RETRY_AFTER_MAX_S ? retry_after_s : OTA_RETRY_AFTER_MAX_S) * 1000u;
    return (uint32_t)delay;
}

static uint32_t backoff_ms(const ota_client_t *c, uint32_t failures, uint32_t retry_after_s) {
    return ota_backoff_ms(&c->config, failures, retry_after_s);
}

static uint32_t poll_ms(const ota_client_t *c, int64_t suggested_s) {
    if (suggested_s > 0 && suggested_s < 7 * 24 * 3600) return (uint32_t)suggested_s * 1000u;
    uint32_t random = c->config.ports->system.random(c->config.ports->system.ctx);
    return (uint32_t)((uint64_t)c->config.poll_interval_s * 1000u * (80u + random % 41u) / 100u);
}

static bool parse_hex32(const char *hex, uint8_t out[32]) {
    if (strlen(hex) != 64) return false;
    for (int i = 0; i < 32; i++) {
        unsigned value = 0;
        for (int k = 0; k < 2; k++) {
            char ch = hex[2 * i + k];
            value <<= 4;
            if (ch >= '0' && ch <= '9') value |= (unsigned)(ch - '0');
            else if (ch >= 'a' && ch <= 'f') value |= (unsigned)(ch - 'a' + 10);
            else if (ch >= 'A' && ch <= 'F') value |= (unsigned)(ch - 'A' + 10);
            else return false;
        }
        out[i] = (uint8_t)value;
    }
    return true;
}

/* Standard base64 with padding, into exactly `expected` bytes. */
static bool parse_base64(const char *text, uint8_t *out, size_t expected) {
    size_t n = 0;
    uint32_t bits = 0;
    int count = 0;
    for (const char *p = text; *p && *p != '='; p++) {
        int value;
        if (*p >= 'A' && *p <= 'Z') value = *p - 'A';
        else if (*p >= 'a' && *p <= 'z') value = *p - 'a' + 26;
        else if (*p >= '0' && *p <= '9') value = *p - '0' + 52;
        else if (*p == '+') value = 62;
        else if (*p == '/') value = 63;
        else return false;
        bits = (bits << 6) | (uint32_t)value;
        count += 6;
        if (count >= 8) {
            count -= 8;
            if (n == expected) return false;
            out[n++] = (uint8_t)(bits >> count);
        }
    }
    return n == expected;
}

static void hex_of(const uint8_t *bytes, size_t len, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * len] = '\0';
}

const char *ota_event_name(ota_event_t event) {
    switch (event) {
    case OTA_EVENT_OFFERED: return "offered";
    case OTA_EVENT_DOWNLOAD_STARTED: return "download_started";
    case OTA_EVENT_DOWNLOADED: return "downloaded";
    case OTA_EVENT_FLASHED: return "flashed";
    case OTA_EVENT_VALIDATED: return "validated";
    case OTA_EVENT_REBOOT: return "reboot";
    case OTA_EVENT_CONFIRMED: return "confirmed";
    case OTA_EVENT_FAILED: return "failed";
    case OTA_EVENT_ROLLED_BACK: return "rolled_back";
    case OTA_EVENT_NONE: break;
    }
    return "";
}

const char *ota_reason_name(ota_reason_t reason) {
    switch (reason) {
    case OTA_REASON_SIGNATURE_INVALID: return "signature_invalid";
    case OTA_REASON_CHECKSUM_MISMATCH: return "checksum_mismatch";
    case OTA_REASON_DOWNLOAD_FAILED: return "download_failed";
    case OTA_REASON_FLASH_WRITE_FAILED: return "flash_write_failed";
    case OTA_REASON_CONFIRM_TIMEOUT: return "confirm_timeout";
    case OTA_REASON_BOOT_FAILED: return "boot_failed";
    case OTA_REASON_HEALTH_CHECK_FAILED: return "health_check_failed";
    case OTA_REASON_NONE: break;
    }
    return "";
}

/* ---- the saved record ---- */

/*
 * The saved record's bytes are laid out in the answer buffer, not on the stack: 876 bytes there
 * would more than double the core's deepest stack, which runs on the application's task. Nothing
 * reads an answer after a save without a request in between, which writes a new answer.
 */
_Static_assert(OTA_RECORD_BYTES <= OTA_RESPONSE_MAX, "the saved record is laid out in the answer buffer");

static uint8_t *record_scratch(ota_client_t *c) {
    return (uint8_t *)c->response;
}

static ota_err_t save(ota_client_t *c) {
    uint8_t *bytes = record_scratch(c);
    ota_record_encode(&c->record, bytes);
    ota_err_t err = c->config.ports->state.save(c->config.ports->state.ctx, bytes, OTA_RECORD_BYTES);
    c->response[0] = '\0';
    if (err != OTA_OK) log_line(c, OTA_LOG_ERROR, "saving the update state failed (%d)", (int)err);
    return err;
}

/* A terminal event to send until the server accepts it; the caller saves. */
static void set_pending(ota_client_t *c, ota_event_t event, ota_reason_t reason) {
    ota_record_t *r = &c->record;
    r->pending_event = (uint8_t)event;
    r->pending_reason = (uint8_t)reason;
    r->pending_build = r->build_number;
    memcpy(r->pending_deployment_id, r->deployment_id, sizeof r->pending_deployment_id);
    c->next_report_at = now_ms(c);
    c->report_failures = 0;
    c->last_event = event;
    c->last_reason = reason;
    log_line(c, event == OTA_EVENT_CONFIRMED ? OTA_LOG_INFO : OTA_LOG_WARN, "update %s%s%s (build %s)", ota_event_name(event),
             reason ? ": " : "", ota_reason_name(reason), int64_text(r->build_number).text);
}

/* ---- HTTP requests ---- */

static bool endpoint(const ota_client_t *c, const char *path, char out[ENDPOINT_MAX]) {
    int n = snprintf(out, ENDPOINT_MAX, "%s%s", c->config.server_url, path);
    return n > 0 && n < ENDPOINT_MAX;
}

/* Appends formatted text to the request body; false when it does not fit. */
static bool append(ota_client_t *c, size_t *len, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(c->request + *len, sizeof c->request - *len, format, args);
    va_end(args);
    if (n < 0 || (size_t)n >= sizeof c->request - *len) return false;
    *len += (size_t)n;
    return true;
}

static bool append_field(ota_client_t *c, size_t *len, const char *name, const char *value) {
    if (!value || !*value) return true;
    return append(c, len, ",\"%s\":", name) && json_put_string(c->request, sizeof c->request, len, value);
}

static bool applies_deltas(const ota_client_t *c) {
    return c->config.apply_deltas && c->config.ports->slot.read_running != NULL;
}

/* The check's `health` (docs/api.md, "Device health"); left out when there is nothing the service would take. */
static bool append_health(ota_client_t *c, size_t *len, const ota_health_t *health) {
    if (!health || health->boots == 0 || health->abnormal_boots > health->boots || !health->reset_reason || !*health->reset_reason) return true;
    bool ok = append(c, len, ",\"health\":{\"reset_reason\":") && json_put_string(c->request, sizeof c->request, len, health->reset_reason) &&
              append(c, len, ",\"boots\":%lu,\"abnormal_boots\":%lu,\"uptime_seconds\":%s", (unsigned long)health->boots,
                     (unsigned long)health->abnormal_boots, int64_text((int64_t)(health->uptime_seconds & INT64_MAX)).text);
    if (ok && health->min_free_heap >= 0) ok = append(c, len, ",\"min_free_heap\":%s", int64_text(health->min_free_heap).text);
    return ok && append(c, len, "}");
}

static bool build_check_body(ota_client_t *c) {
    const ota_config_t *cfg = &c->config;
    size_t len = 0;
    bool ok = append(c, &len, "{\"current_build_number\":%s", int64_text(c->record.running_build).text) &&
              append_field(c, &len, "device_id", cfg->device_id) && append_field(c, &len, "framework", cfg->framework) &&
              append_field(c, &len, "chip_family", cfg->chip_family) && append_field(c, &len, "board_id", cfg->board_id) &&
              append_field(c, &len, "hardware_revision", cfg->hardware_revision) &&
              append_field(c, &len, "partition_profile", cfg->partition_profile) &&
              append_field(c, &len, "security_mode", cfg->security_mode) && append_field(c, &len, "version_label", cfg->version_label);
    if (ok && cfg->nvs_schema_version >= 0) ok = append(c, &len, ",\"nvs_schema_version\":%ld", (long)cfg->nvs_schema_version);
    /* An offset no clock has would make every check a 400: it is left out instead. */
    if (ok && cfg->utc_offset_minutes && *cfg->utc_offset_minutes >= -720 && *cfg->utc_offset_minutes <= 840) {
        ok = append(c, &len, ",\"utc_offset_minutes\":%d", (int)*cfg->utc_offset_minutes);
    }
    if (ok && cfg->chip_revision) ok = append(c, &len, ",\"chip_revision\":%u", (unsigned)*cfg->chip_revision);
    if (ok && cfg->secure_version) ok = append(c, &len, ",\"secure_version\":%lu", (unsigned long)*cfg->secure_version);
    if (ok) ok = append_health(c, &len, cfg->health);
    if (ok && applies_deltas(c) && c->record.has_running_sha256) {
        /* What a patch would start from, and that this client applies patches. */
        char hash[65];
        hex_of(c->record.running_sha256, sizeof c->record.running_sha256, hash);
        ok = append(c, &len, ",\"current_hash\":\"%s\",\"delta_formats\":[\"%s\"]", hash, OTA_DELTA_FORMAT);
    }
    return ok && append(c, &len, "}");
}

/* `detail`: a JSON object to send as the report's detail, or NULL. */
static bool build_status_body(ota_client_t *c, const char *deployment_id, ota_event_t event, ota_reason_t reason, int64_t build, const char *detail) {
    size_t len = 0;
    bool ok = append(c, &len, "{\"event\":\"%s\"", ota_event_name(event)) && append_field(c, &len, "device_id", c->config.device_id) &&
              append_field(c, &len, "deployment_id", deployment_id) && append_field(c, &len, "reason", ota_reason_name(reason));
    if (ok && event == OTA_EVENT_CONFIRMED) ok = append(c, &len, ",\"build_number\":%s", int64_text(build).text);
    if (ok && detail) ok = append(c, &len, ",\"detail\":%s", detail);
    return ok && append(c, &len, "}");
}

/* POSTs the request body; OTA_OK with head->status for any HTTP answer. */
static ota_err_t post(ota_client_t *c, const char *path, ota_http_head_t *head) {
    char url[ENDPOINT_MAX];
    if (!endpoint(c, path, url)) return OTA_ERR_NO_SPACE;
    memset(head, 0, sizeof *head);
    c->response[0] = '\0';
    const ota_http_port_t *http = &c->config.ports->http;
    return http->post_json(http->ctx, url, c->config.token, c->request, c->response, sizeof c->response, head);
}

/* Sends an event of the lifecycle once; its loss costs only a line in the device's timeline. */
static void report_once_with(ota_client_t *c, ota_event_t event, const char *detail) {
    ota_http_head_t head;
    if (!build_status_body(c, c->record.deployment_id, event, OTA_REASON_NONE, c->record.build_number, detail)) return;
    ota_err_t err = post(c, "/api/v1/ota/status/", &head);
    if (err != OTA_OK || head.status != 200) log_line(c, OTA_LOG_WARN, "report %s not sent (%d, HTTP %d)", ota_event_name(event), (int)err, head.status);
}

static void report_once(ota_client_t *c, ota_event_t event) {
    report_once_with(c, event, NULL);
}

/* Sends the pending terminal event; clears it once accepted, or once the server says it never will be. */
static ota_err_t report_pending(ota_client_t *c) {
    ota_record_t *r = &c->record;
    ota_http_head_t head;
    if (!build_status_body(c, r->pending_deployment_id, (ota_event_t)r->pending_event, (ota_reason_t)r->pending_reason, r->pending_build, NULL)) {
        return OTA_ERR_NO_SPACE;
    }
    ota_err_t err = post(c, "/api/v1/ota/status/", &head);
    bool accepted = false;
    if (err == OTA_OK && head.status == 200 && json_get_bool(c->response, "accepted", &accepted) && accepted) {
        log_line(c, OTA_LOG_INFO, "report %s accepted", ota_event_name((ota_event_t)r->pending_event));
    } else if (err == OTA_OK && (head.status == 400 || head.status == 403 || head.status == 404)) {
        /* docs/device-integration.md: the deployment is gone or the report can never be taken. */
        log_line(c, OTA_LOG_WARN, "report %s dropped: HTTP %d", ota_event_name((ota_event_t)r->pending_event), head.status);
    } else {
        c->report_failures++;
        c->next_report_at = now_ms(c) + backoff_ms(c, c->report_failures, err == OTA_OK ? head.retry_after_s : 0);
        return OTA_OK;
    }
    r->pending_event = OTA_EVENT_NONE;
    r->pending_reason = OTA_REASON_NONE;
    c->report_failures = 0;
    return save(c);
}

/* ---- hashing ---- */

static bool verifies_signature(const ota_client_t *c) {
    return c->record.has_signature && c->config.signing_key_count > 0;
}

static void hashes_begin(ota_client_t *c) {
    const ota_crypto_port_t *crypto = &c->config.ports->crypto;
    crypto->sha256_init(c->sha256_state);
    if (verifies_signature(c)) {
        for (size_t i = 0; i < c->config.signing_key_count; i++) {
            crypto->ed25519_init(c->ed25519_state[i], c->record.signature, c->config.signing_keys[i]);
        }
    }
    c->hashed = 0;
}

static void hashes_update(ota_client_t *c, const uint8_t *data, size_t len) {
    const ota_crypto_port_t *crypto = &c->config.ports->crypto;
    crypto->sha256_update(c->sha256_state, data, len);
    if (verifies_signature(c)) {
        for (size_t i = 0; i < c->config.signing_key_count; i++) crypto->ed25519_update(c->ed25519_state[i], data, len);
    }
    c->hashed += (uint32_t)len;
}

/*
 * Hashes the slot's first `upto` bytes again from flash (after a reboot the hash states are gone),
 * OTA_HASH_STEP_BYTES at most per call, so that a step's work stays bounded (ota_client_step);
 * *done once all are hashed. Carries on from where the previous call stopped.
 */
static ota_err_t hashes_from_slot(ota_client_t *c, uint32_t upto, bool *done) {
    const ota_slot_port_t *slot = &c->config.ports->slot;
    if (!c->hashes_valid || c->hashed > upto) {
        hashes_begin(c);
        c->hashes_valid = true;
    }
    uint32_t stop = upto - c->hashed > OTA_HASH_STEP_BYTES ? c->hashed + OTA_HASH_STEP_BYTES : upto;
    while (c->hashed < stop) {
        size_t n = stop - c->hashed < sizeof c->read_buffer ? stop - c->hashed : sizeof c->read_buffer;
        ota_err_t err = slot->read(slot->ctx, c->hashed, c->read_buffer, n);
        if (err != OTA_OK) {
            c->hashes_valid = false;
            return err;
        }
        hashes_update(c, c->read_buffer, n);
    }
    *done = c->hashed == upto;
    return OTA_OK;
}

/* Finishes the hashes over the whole image: the reason it is refused, or OTA_REASON_NONE. */
static ota_reason_t hashes_verdict(ota_client_t *c) {
    const ota_crypto_port_t *crypto = &c->config.ports->crypto;
    uint8_t digest[32];
    crypto->sha256_final(c->sha256_state, digest);
    c->hashed = 0;
    c->hashes_valid = false;
    if (memcmp(digest, c->record.sha256, sizeof digest) != 0) return OTA_REASON_CHECKSUM_MISMATCH;
    if (!c->record.has_signature) return c->config.require_signature ? OTA_REASON_SIGNATURE_INVALID : OTA_REASON_NONE;
    if (!verifies_signature(c)) return OTA_REASON_NONE;
    bool valid = false;
    for (size_t i = 0; i < c->config.signing_key_count; i++) {
        /* Every state is finished, valid or not, so that a port's state never stays half-used. */
        if (crypto->ed25519_final(c->ed25519_state[i], c->record.signature, c->config.signing_keys[i])) valid = true;
    }
    return valid ? OTA_REASON_NONE : OTA_REASON_SIGNATURE_INVALID;
}

/* ---- the download ---- */

static void close_download(ota_client_t *c) {
    if (c->http_open) c->config.ports->http.get_close(c->config.ports->http.ctx);
    c->http_open = false;
}

/* ---- whether the offer still stands (docs/api.md, "Stopping devices mid-update") ---- */

typedef enum {
    OFFER_STANDS,    /* go on */
    OFFER_HOLD,      /* stop, keep the bytes and the phase, ask again later (a pause, a refused token) */
    OFFER_WITHDRAWN, /* stop and abandon the update (a cancel, an archive, a deactivated device) */
    OFFER_UNKNOWN,   /* no answer: no connection, 429, 5xx */
} offer_standing_t;

/*
 * Asks whether the offer being downloaded still stands. A server that cannot say (a release
 * before the question answers 404) lets the update go on, as it would have before; a refused
 * token holds it, since a device the service no longer accepts must not install.
 */
static offer_standing_t ask_offer_standing(ota_client_t *c, uint32_t *retry_after_s) {
    size_t len = 0;
    *retry_after_s = 0;
    c->asked_at = c->received;
    if (!(append(c, &len, "{\"deployment_id\":") && json_put_string(c->request, sizeof c->request, &len, c->record.deployment_id) &&
          append_field(c, &len, "device_id", c->config.device_id) && append(c, &len, "}"))) {
        return OFFER_STANDS;
    }
    ota_http_head_t head;
    ota_err_t err = post(c, "/api/v1/ota/offer/", &head);
    if (err != OTA_OK || head.status == 429 || head.status >= 500) {
        *retry_after_s = err == OTA_OK ? head.retry_after_s : 0;
        return OFFER_UNKNOWN;
    }
    if (head.status == 401 || head.status == 403) {
        snprintf(c->last_stop_status, sizeof c->last_stop_status, "token_refused");
        return OFFER_HOLD;
    }
    bool standing = true, hold = false;
    if (head.status != 200 || !json_get_bool(c->response, "standing", &standing) || standing) return OFFER_STANDS;
    if (!json_get_string(c->response, "status", c->last_stop_status, sizeof c->last_stop_status)) c->last_stop_status[0] = '\0';
    json_get_bool(c->response, "hold", &hold);
    return hold ? OFFER_HOLD : OFFER_WITHDRAWN;
}

/* Tells the service why the update stopped: a line of the device's timeline, sent once. */
static void report_stop(ota_client_t *c) {
    size_t len = 0;
    ota_http_head_t head;
    if (!(append(c, &len, "{\"event\":\"stopped\"") && append_field(c, &len, "device_id", c->config.device_id) &&
          append_field(c, &len, "deployment_id", c->record.deployment_id) && append_field(c, &len, "reason", c->last_stop_status) &&
          append(c, &len, "}"))) {
        return;
    }
    ota_err_t err = post(c, "/api/v1/ota/status/", &head);
    if (err != OTA_OK || head.status != 200) log_line(c, OTA_LOG_WARN, "report stopped not sent (%d, HTTP %d)", (int)err, head.status);
}

/*
 * The offer no longer stands: the download stops at its last saved chunk, and the boot slot is not
 * switched. Held (a pause), the phase stays, and a later check or ask resumes from the offset.
 * Abandoned, the update ends with no failure; its bytes stay in the slot, so the same build offered
 * again resumes from them (take_offer).
 */
static ota_err_t stop_update(ota_client_t *c, offer_standing_t standing) {
    close_download(c);
    ota_record_t *r = &c->record;
    bool hold = standing == OFFER_HOLD;
    log_line(c, OTA_LOG_WARN, "update of build %s stopped at byte %lu (%s): %s", int64_text(r->build_number).text, (unsigned long)c->received,
             c->last_stop_status, hold ? "holding its bytes" : "abandoned");
    if (strcmp(c->last_stop_status, "token_refused") != 0) report_stop(c);
    uint64_t later = now_ms(c) + poll_ms(c, 0);
    c->url_valid = false;
    c->next_check_at = later;
    c->next_ask_at = later;
    c->held = hold;
    if (hold) return OTA_OK;
    r->phase = OTA_PHASE_IDLE;
    c->slot_open = false;
    c->verified = false;
    return save(c);
}

/*
 * A download held by a pause downloads nothing, so nothing asks whether its offer stands: each
 * check that offers nothing asks instead, and a deployment cancelled (or its build archived)
 * meanwhile abandons it, reporting the stop, rather than holding it for ever.
 */
static ota_err_t ask_while_held(ota_client_t *c) {
    uint32_t retry_after_s;
    offer_standing_t standing = ask_offer_standing(c, &retry_after_s);
    return standing == OFFER_WITHDRAWN ? stop_update(c, standing) : OTA_OK;
}

/* The size of what is downloaded: the patch, or the image. */
static uint32_t download_size(const ota_client_t *c) {
    return c->record.delta ? c->record.patch_size : c->record.image_size;
}

/*
 * Ends the update with a failure to report; the previous image keeps running. A download that
 * failed for want of bytes keeps the offset it saved (and the build it was for): its bytes are
 * good, and the same build offered again resumes from them (take_offer). Any other failure starts
 * the next offer from byte 0.
 */
static ota_err_t fail_update(ota_client_t *c, ota_reason_t reason) {
    close_download(c);
    ota_record_t *r = &c->record;
    set_pending(c, OTA_EVENT_FAILED, reason);
    r->phase = OTA_PHASE_IDLE;
    if (reason != OTA_REASON_DOWNLOAD_FAILED) {
        r->offset = 0;
        r->patch_offset = 0;
        r->delta = 0;
    }
    c->slot_open = false;
    c->url_valid = false;
    c->verified = false;
    c->next_check_at = now_ms(c) + poll_ms(c, 0);
    return save(c);
}

/* Why a delta patch was given up for the full image: the `delta_failure` of the `downloaded` report. */
enum {
    DELTA_FAILED_NONE = 0,
    DELTA_FAILED_APPLY,     /* the applier refused the patch */
    DELTA_FAILED_SHORT,     /* the patch ended before the new image */
    DELTA_FAILED_SIZE,      /* the patch makes an image of another size than the offer's */
    DELTA_FAILED_CHECKSUM,  /* the result is not the build's bytes: another base, or bytes altered */
    DELTA_FAILED_GONE,      /* the patch's URL answered 404 */
    DELTA_FAILED_WITHDRAWN, /* a later offer of the build no longer carried this patch */
};

static const char *delta_failure_name(uint8_t failure) {
    switch (failure) {
    case DELTA_FAILED_APPLY: return "patch_refused";
    case DELTA_FAILED_SHORT: return "patch_incomplete";
    case DELTA_FAILED_SIZE: return "size_mismatch";
    case DELTA_FAILED_CHECKSUM: return "checksum_mismatch";
    case DELTA_FAILED_GONE: return "patch_unavailable";
    case DELTA_FAILED_WITHDRAWN: return "patch_withdrawn";
    default: return "";
    }
}

/* The update goes on with the build's full image, from byte 0; the caller saves. */
static void switch_to_image(ota_client_t *c, uint8_t failure) {
    ota_record_t *r = &c->record;
    log_line(c, OTA_LOG_WARN, "the delta patch to build %s failed (%s): downloading the full image", int64_text(r->build_number).text,
             delta_failure_name(failure));
    r->delta = 0;
    r->delta_failure = failure;
    r->offset = 0;
    r->patch_offset = 0;
    r->patch_size = 0;
    c->slot_open = false;
    c->verified = false;
    c->hashes_valid = false;
}

/* A patch failed: not the update. Its bytes are dropped, and the next check, at once, gives the
 * full image's URL, downloaded into the slot from byte 0. */
static ota_err_t refuse_patch(ota_client_t *c, uint8_t failure) {
    close_download(c);
    switch_to_image(c, failure);
    c->url_valid = false;
    c->next_check_at = now_ms(c);
    return save(c);
}

/*
 * A download attempt that ended early: tried again after the server's Retry-After or the back-off.
 * The update fails only when max_download_attempts attempts in a row got no byte and no byte has
 * come for download_budget_s: a server's outage is waited out, not counted.
 */
static ota_err_t attempt_failed(ota_client_t *c, uint32_t retry_after_s, const char *why) {
    close_download(c);
    if (c->attempt_bytes == 0) c->download_failures++;
    c->attempt_bytes = 0;
    log_line(c, OTA_LOG_WARN, "download interrupted at %lu of %lu bytes: %s", (unsigned long)c->received, (unsigned long)download_size(c), why);
    bool out_of_budget = now_ms(c) - c->last_byte_at >= (uint64_t)c->config.download_budget_s * 1000u;
    if (c->download_failures >= c->config.max_download_attempts && out_of_budget) return fail_update(c, OTA_REASON_DOWNLOAD_FAILED);
    c->next_download_at = now_ms(c) + backoff_ms(c, c->download_failures ? c->download_failures : 1, retry_after_s);
    return OTA_OK;
}

/* Starts over at byte 0: the server sent the whole build, or the slot's bytes cannot be trusted. */
static ota_err_t restart_download(ota_client_t *c) {
    ota_record_t *r = &c->record;
    c->received = 0;
    c->written = 0;
    c->patch_pending = 0;
    ota_delta_init(&c->delta);
    hashes_begin(c);
    /* Opened again at 0: a slot that appends (ESP-IDF's esp_ota_write) goes on only from where it
     * was opened, which for a resume was past 0. */
    const ota_slot_port_t *slot = &c->config.ports->slot;
    if (c->slot_open && slot->open(slot->ctx, r->image_size, 0) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
    if (r->offset != 0 || r->patch_offset != 0) {
        r->offset = 0;
        r->patch_offset = 0;
        ota_delta_save(&c->delta, r->apply_state);
        return save(c);
    }
    return OTA_OK;
}

static ota_err_t open_download(ota_client_t *c) {
    const ota_http_port_t *http = &c->config.ports->http;
    ota_record_t *r = &c->record;
    char if_range[72] = "";
    if (c->received > 0 && c->etag[0]) {
        memcpy(if_range, c->etag, sizeof if_range);
    } else if (c->received > 0) {
        /* No answer of this download seen in this boot: the service's tag, the SHA-256 of the
         * build (or of the patch). */
        if_range[0] = '"';
        hex_of(r->delta ? r->patch_sha256 : r->sha256, sizeof r->sha256, if_range + 1);
        if_range[65] = '"';
        if_range[66] = '\0';
    }
    ota_http_head_t head;
    memset(&head, 0, sizeof head);
    ota_err_t err = http->get_open(http->ctx, c->url, c->received, if_range, &head);
    if (err != OTA_OK) {
        http->get_close(http->ctx);
        return attempt_failed(c, 0, "no connection");
    }
    c->http_open = true;
    c->attempt_bytes = 0;
    if ((head.status == 200 || head.status == 206) && head.etag[0]) memcpy(c->etag, head.etag, sizeof c->etag);
    int64_t size = download_size(c);
    if (head.status == 206 && head.range_start == (int64_t)c->received && head.total_size == size) return OTA_OK;
    /* A 200 without Content-Length (chunked) is read up to the offer's size; one cut short is an
     * interrupted attempt, and the hash decides what the bytes are worth. */
    if (head.status == 200 && (head.content_length == size || head.content_length < 0)) {
        if (c->received > 0) log_line(c, OTA_LOG_WARN, "the server sent the whole build instead of a range: starting over");
        return restart_download(c);
    }
    close_download(c);
    if (head.status == 403 || head.status == 409 || head.status == 410) {
        /* Refused: the URL expired, or the offer it was made for no longer stands (409 held, 410
         * withdrawn). Asked which, the device stops, or checks again for a new URL. */
        uint32_t retry_after_s;
        offer_standing_t standing = ask_offer_standing(c, &retry_after_s);
        if (standing == OFFER_HOLD || standing == OFFER_WITHDRAWN) return stop_update(c, standing);
        if (head.status != 403) return attempt_failed(c, retry_after_s, "the download was refused while the offer stands");
        log_line(c, OTA_LOG_INFO, "download URL refused (HTTP 403): checking again for a new one");
        c->url_valid = false;
        c->next_check_at = now_ms(c);
        return OTA_OK;
    }
    if (head.status == 404) return r->delta ? refuse_patch(c, DELTA_FAILED_GONE) : fail_update(c, OTA_REASON_DOWNLOAD_FAILED);
    if (head.status == 206 || head.status == 200 || head.status == 416) {
        /* A range or a size we did not ask for: the slot's bytes are not this answer's. */
        ota_err_t reset = restart_download(c);
        if (reset != OTA_OK) return reset;
        return attempt_failed(c, 0, "the answer's range or size does not match the offer");
    }
    char why[32];
    snprintf(why, sizeof why, "HTTP %d", head.status);
    return attempt_failed(c, head.retry_after_s, why);
}

/* The image is whole: verify it, finish the slot and move on to activating it. */
static ota_err_t complete_download(ota_client_t *c) {
    close_download(c);
    ota_record_t *r = &c->record;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    ota_reason_t refused = hashes_verdict(c);
    /* A patch that gave other bytes (another base, altered bytes) fails itself, not the update. */
    if (refused == OTA_REASON_CHECKSUM_MISMATCH && r->delta) return refuse_patch(c, DELTA_FAILED_CHECKSUM);
    if (refused != OTA_REASON_NONE) return fail_update(c, refused);
    /* How the image came: the service's timeline shows patches applied and patches given up. */
    char detail[80];
    if (r->delta) snprintf(detail, sizeof detail, "{\"delta\":\"applied\",\"patch_bytes\":%lu}", (unsigned long)r->patch_size);
    else if (r->delta_failure) snprintf(detail, sizeof detail, "{\"delta\":\"fell_back\",\"delta_failure\":\"%s\"}", delta_failure_name(r->delta_failure));
    report_once_with(c, OTA_EVENT_DOWNLOADED, r->delta || r->delta_failure ? detail : NULL);
    if (slot->flush(slot->ctx) != OTA_OK || slot->finish(slot->ctx) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
    report_once(c, OTA_EVENT_FLASHED);
    c->verified = true;
    c->slot_open = false;
    c->next_ask_at = now_ms(c);
    c->record.phase = OTA_PHASE_ACTIVATING;
    return save(c);
}

/*
 * Reads the next bytes of the download's body (at most `want`) into the read buffer and counts
 * them. A read that brings nothing is an attempt that ended early (attempt_failed): *n is 0 and
 * the caller returns what this does.
 */
static ota_err_t receive(ota_client_t *c, size_t want, size_t *n) {
    const ota_http_port_t *http = &c->config.ports->http;
    const char *ended = NULL;
    *n = 0;
    if (http->get_read(http->ctx, c->read_buffer, want, n) != OTA_OK) ended = "connection broken";
    else if (*n == 0) ended = "body ended early";
    else if (*n > want) ended = "port read past its buffer";
    if (ended) {
        *n = 0;
        return attempt_failed(c, 0, ended);
    }
    c->received += (uint32_t)*n;
    c->attempt_bytes += (uint32_t)*n;
    c->download_failures = 0;
    c->last_byte_at = now_ms(c);
    return OTA_OK;
}

/* After a chunk was saved: every stop_check_bytes of download, ask whether the offer stands. */
static ota_err_t after_chunk_saved(ota_client_t *c) {
    if (c->received - c->asked_at < c->config.stop_check_bytes) return OTA_OK;
    /* Asked after the save, so that a held download resumes from exactly these bytes. No answer
     * lets the download go on: the ask before the switch is the one that must be answered. */
    uint32_t retry_after_s;
    offer_standing_t standing = ask_offer_standing(c, &retry_after_s);
    return standing == OFFER_HOLD || standing == OFFER_WITHDRAWN ? stop_update(c, standing) : OTA_OK;
}

/* The image itself: read up to the next chunk boundary, then make it durable and save the offset. */
static ota_err_t image_download_step(ota_client_t *c) {
    ota_record_t *r = &c->record;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    uint32_t boundary = ota_chunk_end(c->received, c->config.chunk_bytes, r->image_size);
    while (c->received < boundary) {
        size_t want = boundary - c->received < sizeof c->read_buffer ? boundary - c->received : sizeof c->read_buffer;
        size_t n = 0;
        ota_err_t err = receive(c, want, &n);
        if (n == 0) return err;
        if (slot->write(slot->ctx, c->written, c->read_buffer, n) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
        hashes_update(c, c->read_buffer, n);
        c->written = c->received;
    }
    if (c->received == r->image_size) return complete_download(c);
    if (slot->flush(slot->ctx) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
    r->offset = c->received;
    ota_err_t err = save(c);
    return err != OTA_OK ? err : after_chunk_saved(c);
}

/* ---- applying a delta patch ---- */

static bool patch_read_base(void *ctx, uint32_t offset, uint8_t *out, size_t len) {
    ota_client_t *c = ctx;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    return slot->read_running(slot->ctx, offset, out, len) == OTA_OK;
}

/* The applier's output: the slot, and the hashes over it. */
static bool patch_write(void *ctx, const uint8_t *data, size_t len) {
    ota_client_t *c = ctx;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    /* Past the offer's size is the patch's fault (refused as the patch); a write that fails, the flash's. */
    if ((uint64_t)c->written + len > c->record.image_size) return false;
    if (slot->write(slot->ctx, c->written, data, len) != OTA_OK) {
        c->slot_write_failed = true;
        return false;
    }
    hashes_update(c, data, len);
    c->written += (uint32_t)len;
    return true;
}

/* Whether to save at this pause: before the patch bytes since the last save could pass a chunk
 * (the next pause is a sector of image away, which takes at most about a sector of patch, plus
 * the read buffer received ahead), or once a chunk of image was written. */
static bool save_at_pause(const ota_client_t *c) {
    return c->written - c->record.offset >= c->config.chunk_bytes ||
           (uint64_t)c->received - c->record.patch_offset + 2u * SECTOR_BYTES > c->config.chunk_bytes;
}

/*
 * The patch: fed to the applier as it arrives, which writes the image into the slot. Saves come
 * at the applier's pauses, each on a sector boundary of the image (so a resumed slot starts on a
 * sector it erases), with the patch offset and the applier's state.
 */
static ota_err_t patch_download_step(ota_client_t *c) {
    ota_record_t *r = &c->record;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    ota_delta_io_t io = {.ctx = c, .read_base = patch_read_base, .write = patch_write, .base_size = UINT32_MAX, .pause_every = SECTOR_BYTES};
    bool paused = true; /* the state may hold work from a pause: the first feed finishes it */
    for (;;) {
        if (c->patch_pending == 0 && !paused) {
            if (c->received == r->patch_size) break;
            if (!c->http_open) {
                ota_err_t err = open_download(c);
                if (err != OTA_OK || !c->http_open || !r->delta) return err;
            }
            size_t want = r->patch_size - c->received < sizeof c->read_buffer ? r->patch_size - c->received : sizeof c->read_buffer;
            size_t n = 0;
            ota_err_t err = receive(c, want, &n);
            if (n == 0) return err;
            c->patch_pending_at = 0;
            c->patch_pending = (uint16_t)n;
        }
        size_t consumed = 0;
        c->slot_write_failed = false;
        ota_delta_result_t result = ota_delta_feed(&c->delta, c->read_buffer + c->patch_pending_at, c->patch_pending, &io, &consumed);
        c->patch_pending_at = (uint16_t)(c->patch_pending_at + consumed);
        c->patch_pending = (uint16_t)(c->patch_pending - consumed);
        paused = result == OTA_DELTA_PAUSED;
        uint32_t target = ota_delta_target_size(&c->delta);
        if (target != 0 && target != r->image_size) return refuse_patch(c, DELTA_FAILED_SIZE);
        if (result == OTA_DELTA_ERROR) {
            if (c->slot_write_failed) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
            log_line(c, OTA_LOG_WARN, "the delta patch was refused: %s", ota_delta_error(&c->delta));
            return refuse_patch(c, DELTA_FAILED_APPLY);
        }
        if (paused && save_at_pause(c)) {
            if (slot->flush(slot->ctx) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
            r->offset = c->written;
            r->patch_offset = c->received - c->patch_pending;
            ota_delta_save(&c->delta, r->apply_state);
            ota_err_t err = save(c);
            return err != OTA_OK ? err : after_chunk_saved(c);
        }
    }
    /* The whole patch is in: the image is whole only if the applier finished it. */
    close_download(c);
    if (c->written != r->image_size) return refuse_patch(c, DELTA_FAILED_SHORT);
    return complete_download(c);
}

static ota_err_t download_step(ota_client_t *c) {
    ota_record_t *r = &c->record;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    if (!c->slot_open) {
        if (slot->open(slot->ctx, r->image_size, r->offset) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
        c->slot_open = true;
        c->written = r->offset;
        c->received = r->delta ? r->patch_offset : r->offset;
        c->asked_at = c->received;
        c->hashed = 0;
        c->hashes_valid = false;
        c->patch_pending = 0;
        if (r->delta) {
            /* The applier as the saved chunk left it; a state that does not fit the saved offset
             * is not trusted, and the patch starts over. */
            bool resumed = r->patch_offset > 0 && ota_delta_load(&c->delta, r->apply_state) && ota_delta_written(&c->delta) == r->offset;
            if (!resumed && (r->patch_offset > 0 || r->offset > 0)) {
                ota_err_t err = restart_download(c);
                if (err != OTA_OK || !c->slot_open) return err;
            } else if (!resumed) {
                ota_delta_init(&c->delta);
            }
        }
    }
    if (!c->hashes_valid || c->hashed != c->written) {
        bool done = false;
        if (hashes_from_slot(c, c->written, &done) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
        if (!done) return OTA_OK;
    }
    if (r->delta) return patch_download_step(c);
    if (c->received < r->image_size && !c->http_open) {
        ota_err_t err = open_download(c);
        if (err != OTA_OK || !c->http_open) return err;
    }
    return image_download_step(c);
}

uint32_t ota_chunk_end(uint32_t received, uint32_t chunk, uint32_t size) {
    uint64_t end = ((uint64_t)received / chunk + 1u) * chunk;
    return end < size ? (uint32_t)end : size;
}

/* ---- the check ---- */

/* The patch an offer carries, as far as this client can take it. */
typedef struct {
    uint32_t size;
    uint8_t sha256[32];
    json_value_t object; /* the offer's `patch` member, whose `url` is read once the patch is taken */
} offered_patch_t;

/* True when the offer carries a patch this client applies, from the image it runs, smaller than the image. */
static bool read_offered_patch(ota_client_t *c, int64_t image_size, offered_patch_t *patch) {
    const ota_record_t *r = &c->record;
    if (!applies_deltas(c) || !r->has_running_sha256) return false;
    if (!json_find(c->response, "patch", &patch->object) || patch->object.kind != JSON_NESTED) return false;
    const char *object = patch->object.start;
    char text[72];
    uint8_t base[32];
    int64_t size = 0;
    if (!json_get_string(object, "format", text, sizeof text) || strcmp(text, OTA_DELTA_FORMAT) != 0) return false;
    if (!json_get_string(object, "base_sha256", text, sizeof text) || !parse_hex32(text, base)) return false;
    if (memcmp(base, r->running_sha256, sizeof base) != 0) return false;
    if (!json_get_int(object, "size", &size) || size <= 0 || size >= image_size) return false;
    patch->size = (uint32_t)size;
    return json_get_string(object, "sha256", text, sizeof text) && parse_hex32(text, patch->sha256);
}

/* Takes an offer: a new update, or a new URL for the build being downloaded. */
static ota_err_t take_offer(ota_client_t *c) {
    ota_record_t *r = &c->record;
    int64_t build = 0, size = 0;
    char checksum[72], signature[100] = "", deployment[sizeof r->deployment_id];
    uint8_t sha256[32], signature_bytes[64];
    if (!json_get_int(c->response, "build_number", &build) || !json_get_int(c->response, "size", &size) || size <= 0 ||
        size > (int64_t)UINT32_MAX - SECTOR_BYTES || !json_get_string(c->response, "checksum", checksum, sizeof checksum) ||
        !parse_hex32(checksum, sha256) || !json_get_string(c->response, "deployment_id", deployment, sizeof deployment) ||
        !json_get_string(c->response, "url", c->url, sizeof c->url)) {
        log_line(c, OTA_LOG_ERROR, "the offer could not be read");
        return OTA_ERR_PROTOCOL;
    }
    json_value_t signature_value;
    bool has_signature = json_find(c->response, "signature", &signature_value) && signature_value.kind == JSON_STRING;
    if (has_signature && (!json_get_string(c->response, "signature", signature, sizeof signature) ||
                          !parse_base64(signature, signature_bytes, sizeof signature_bytes))) {
        /* A signature that is not 64 bytes of base64 can never verify. */
        memset(signature_bytes, 0, sizeof signature_bytes);
    }
    c->url_valid = true;
    bool same_build = r->build_number == build && r->image_size == (uint32_t)size && memcmp(r->sha256, sha256, sizeof sha256) == 0 &&
                      (bool)r->has_signature == has_signature && (!has_signature || memcmp(r->signature, signature_bytes, sizeof signature_bytes) == 0);
    /* A patch is taken when it can be, unless one to this build already failed; its URL must fit. */
    offered_patch_t patch;
    bool use_patch = !(same_build && r->delta_failure) && read_offered_patch(c, size, &patch);
    bool same_patch = use_patch && r->delta && r->patch_size == patch.size && memcmp(r->patch_sha256, patch.sha256, sizeof patch.sha256) == 0;
    if (same_build && r->phase == OTA_PHASE_DOWNLOADING) {
        if (c->held) {
            /* Offered again after a pause: the time it held is no download time. */
            c->held = false;
            c->download_failures = 0;
            c->last_byte_at = now_ms(c);
        }
        if (r->delta && !(same_patch && json_get_string(patch.object.start, "url", c->url, sizeof c->url))) {
            /* The offer no longer carries the patch being applied: the image, from byte 0. */
            if (!json_get_string(c->response, "url", c->url, sizeof c->url)) return OTA_ERR_PROTOCOL;
            close_download(c);
            switch_to_image(c, DELTA_FAILED_WITHDRAWN);
            memcpy(r->deployment_id, deployment, sizeof r->deployment_id);
            return save(c);
        }
        if (strcmp(r->deployment_id, deployment) != 0) {
            memcpy(r->deployment_id, deployment, sizeof r->deployment_id);
            return save(c);
        }
        return OTA_OK;
    }
    if (use_patch && !json_get_string(patch.object.start, "url", c->url, sizeof c->url)) {
        use_patch = false;
        if (!json_get_string(c->response, "url", c->url, sizeof c->url)) return OTA_ERR_PROTOCOL;
    }
    c->etag[0] = '\0';
    /* The build a download that ran out of budget was for: its saved bytes are still in the slot,
     * if this download is of the same thing (the image, or the same patch). */
    bool kept_bytes = same_build && r->phase == OTA_PHASE_IDLE && r->offset > 0 && r->target_slot == (uint8_t)(1u - c->running_slot) &&
                      (use_patch ? same_patch : !r->delta);
    close_download(c);
    r->phase = OTA_PHASE_DOWNLOADING;
    r->target_slot = (uint8_t)(1u - c->running_slot);
    r->build_number = build;
    r->image_size = (uint32_t)size;
    if (!same_build) r->delta_failure = DELTA_FAILED_NONE;
    r->delta = use_patch;
    if (use_patch) {
        r->patch_size = patch.size;
        memcpy(r->patch_sha256, patch.sha256, sizeof r->patch_sha256);
    }
    if (!kept_bytes) {
        r->offset = 0;
        r->patch_offset = 0;
    }
    memcpy(r->sha256, sha256, sizeof sha256);
    r->has_signature = has_signature;
    memcpy(r->signature, signature_bytes, sizeof signature_bytes);
    memcpy(r->deployment_id, deployment, sizeof r->deployment_id);
    c->slot_open = false;
    c->verified = false;
    c->held = false;
    c->download_failures = 0;
    c->last_byte_at = now_ms(c);
    c->next_download_at = now_ms(c);
    ota_err_t err = save(c);
    if (err != OTA_OK) return err;
    log_line(c, OTA_LOG_INFO, "offered build %s (%s bytes) of deployment %s%s", int64_text(build).text, int64_text(size).text, deployment,
             use_patch ? ", as a delta patch" : "");
    report_once(c, OTA_EVENT_OFFERED);
    if (!has_signature && c->config.require_signature) return fail_update(c, OTA_REASON_SIGNATURE_INVALID);
    report_once(c, OTA_EVENT_DOWNLOAD_STARTED);
    return OTA_OK;
}

static ota_err_t check_step(ota_client_t *c) {
    ota_http_head_t head;
    if (!build_check_body(c)) return OTA_ERR_NO_SPACE;
    ota_err_t err = post(c, "/api/v1/ota/check/", &head);
    if (err == OTA_ERR_NO_SPACE) log_line(c, OTA_LOG_ERROR, "the check's answer is larger than OTA_RESPONSE_MAX");
    if (err != OTA_OK || head.status == 429 || head.status >= 500) {
        c->check_failures++;
        uint32_t delay = backoff_ms(c, c->check_failures, err == OTA_OK ? head.retry_after_s : 0);
        uint32_t cap = poll_ms(c, 0);
        c->next_check_at = now_ms(c) + (delay < cap || head.retry_after_s ? delay : cap);
        log_line(c, OTA_LOG_WARN, "check failed (%d, HTTP %d); next in %lu ms", (int)err, head.status, (unsigned long)(c->next_check_at - now_ms(c)));
        return OTA_OK;
    }
    c->check_failures = 0;
    if (head.status != 200) {
        /* 400, 401, 403: the firmware or its token is wrong; retrying sooner would not help. */
        log_line(c, OTA_LOG_ERROR, "check refused: HTTP %d %s", head.status, c->response);
        c->next_check_at = now_ms(c) + poll_ms(c, 0);
        return OTA_OK;
    }
    int64_t poll_after = 0;
    json_get_int(c->response, "poll_after_seconds", &poll_after);
    c->next_check_at = now_ms(c) + poll_ms(c, poll_after);
    /* Resend a pending terminal event after every successful check, as the device API asks. */
    if (c->record.pending_event) c->next_report_at = now_ms(c);
    bool available = false;
    if (!json_get_bool(c->response, "update_available", &available)) {
        log_line(c, OTA_LOG_ERROR, "the check's answer could not be read");
        return OTA_OK;
    }
    if (!available) {
        if (!json_get_string(c->response, "status", c->last_check_status, sizeof c->last_check_status)) c->last_check_status[0] = '\0';
        /* A download under way keeps its bytes: a paused deployment may offer the same build again. */
        close_download(c);
        return c->held ? ask_while_held(c) : OTA_OK;
    }
    snprintf(c->last_check_status, sizeof c->last_check_status, "offered");
    if (c->record.phase == OTA_PHASE_IDLE && c->record.pending_event != OTA_EVENT_NONE) {
        /* The record holds one terminal event: a new update waits until it is accepted, so that
         * its own end never overwrites an earlier failure the server has not heard of. */
        log_line(c, OTA_LOG_INFO, "offer deferred until the %s report is accepted", ota_event_name((ota_event_t)c->record.pending_event));
        return OTA_OK;
    }
    ota_err_t taken = take_offer(c);
    return taken == OTA_ERR_PROTOCOL ? OTA_OK : taken;
}

/* ---- install, trial, confirm ---- */

static ota_err_t activate_step(ota_client_t *c) {
    ota_record_t *r = &c->record;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    if (!c->verified) {
        /* A power cut came between the verification and the switch: verify the slot again. */
        bool done = false;
        if (hashes_from_slot(c, r->image_size, &done) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
        if (!done) return OTA_OK;
        ota_reason_t refused = hashes_verdict(c);
        if (refused != OTA_REASON_NONE) return fail_update(c, refused);
        c->verified = true;
    }
    /* The last moment a stop can reach the device: it switches only once the service said, now,
     * that the offer stands. */
    if (now_ms(c) < c->next_ask_at) return OTA_OK;
    uint32_t retry_after_s;
    offer_standing_t standing = ask_offer_standing(c, &retry_after_s);
    if (standing == OFFER_UNKNOWN) {
        c->ask_failures++;
        c->next_ask_at = now_ms(c) + backoff_ms(c, c->ask_failures, retry_after_s);
        log_line(c, OTA_LOG_WARN, "no answer whether the offer stands: the switch waits");
        return OTA_OK;
    }
    c->ask_failures = 0;
    if (standing != OFFER_STANDS) return stop_update(c, standing);
    c->held = false;
    if (slot->activate(slot->ctx) != OTA_OK) return fail_update(c, OTA_REASON_FLASH_WRITE_FAILED);
    report_once(c, OTA_EVENT_VALIDATED);
    r->phase = OTA_PHASE_REBOOTING;
    ota_err_t err = save(c);
    if (err != OTA_OK) return err;
    report_once(c, OTA_EVENT_REBOOT);
    log_line(c, OTA_LOG_INFO, "rebooting into build %s", int64_text(r->build_number).text);
    c->config.ports->system.reboot(c->config.ports->system.ctx);
    return OTA_OK;
}

static ota_err_t roll_back(ota_client_t *c, ota_reason_t reason) {
    ota_record_t *r = &c->record;
    if (r->deployment_id[0]) set_pending(c, OTA_EVENT_ROLLED_BACK, reason);
    r->phase = OTA_PHASE_IDLE;
    /* Saved before the switch: a cut in between boots the trial again, which init rolls back. */
    ota_err_t err = save(c);
    if (err != OTA_OK) return err;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    err = slot->rollback(slot->ctx);
    if (err != OTA_OK) {
        /* The previous image was not chosen: the trial runs on, and says so, and the next step
         * (the reason to roll back still holds) tries again. A trial starts with nothing pending. */
        r->phase = OTA_PHASE_TRIAL;
        r->pending_event = OTA_EVENT_NONE;
        r->pending_reason = OTA_REASON_NONE;
        c->last_event = OTA_EVENT_NONE;
        c->last_reason = OTA_REASON_NONE;
        ota_err_t saved = save(c);
        return saved != OTA_OK ? saved : err;
    }
    c->config.ports->system.reboot(c->config.ports->system.ctx);
    return OTA_OK;
}

static ota_err_t trial_step(ota_client_t *c) {
    ota_record_t *r = &c->record;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    if (c->confirm_requested) {
        /* Kept until the image is marked valid: a failed flash write is tried again next step. */
        ota_err_t err = slot->mark_valid(slot->ctx);
        if (err != OTA_OK) return err;
        c->confirm_requested = false;
        r->running_build = r->build_number;
        /* What the next check reports as current_hash: unknown for a trial whose record was lost. */
        r->has_running_sha256 = r->deployment_id[0] != '\0';
        memcpy(r->running_sha256, r->sha256, sizeof r->running_sha256);
        /* A trial whose record was lost belongs to no deployment this device knows: nothing to report. */
        if (r->deployment_id[0]) set_pending(c, OTA_EVENT_CONFIRMED, OTA_REASON_NONE);
        r->phase = OTA_PHASE_IDLE;
        c->next_check_at = now_ms(c) + poll_ms(c, 0);
        return save(c);
    }
    if (c->reject_requested) return roll_back(c, OTA_REASON_HEALTH_CHECK_FAILED);
    if (now_ms(c) - c->trial_started_at >= (uint64_t)c->config.trial_timeout_s * 1000u) return roll_back(c, OTA_REASON_CONFIRM_TIMEOUT);
    return OTA_OK;
}

/* ---- the public API ---- */

static ota_err_t check_config(const ota_config_t *cfg) {
    if (!cfg || !cfg->ports || !cfg->server_url || !cfg->token || !*cfg->token || !cfg->framework || !*cfg->framework ||
        !cfg->chip_family || !*cfg->chip_family) {
        return OTA_ERR_INVALID_ARG;
    }
    if (strlen(cfg->server_url) + sizeof "/api/v1/ota/status/" > ENDPOINT_MAX) return OTA_ERR_INVALID_ARG;
    if (cfg->signing_key_count > OTA_MAX_SIGNING_KEYS || (cfg->signing_key_count > 0 && !cfg->signing_keys)) return OTA_ERR_INVALID_ARG;
    if (cfg->require_signature && cfg->signing_key_count == 0) return OTA_ERR_INVALID_ARG;
    if (cfg->chunk_bytes % SECTOR_BYTES != 0) return OTA_ERR_INVALID_ARG;
    const ota_crypto_port_t *crypto = &cfg->ports->crypto;
    if (crypto->sha256_state_size > OTA_CRYPTO_STATE_MAX || crypto->ed25519_state_size > OTA_CRYPTO_STATE_MAX) return OTA_ERR_NO_SPACE;
    return OTA_OK;
}

static ota_err_t load_record(ota_client_t *c) {
    const ota_state_port_t *state = &c->config.ports->state;
    uint8_t *bytes = record_scratch(c);
    size_t len = 0;
    ota_err_t err = state->load(state->ctx, bytes, sizeof c->response, &len);
    if (err != OTA_OK) return err;
    bool readable = ota_record_decode(bytes, len, &c->record);
    c->response[0] = '\0';
    if (readable) return OTA_OK;
    if (len != 0) log_line(c, OTA_LOG_WARN, "the saved update state is unreadable: starting clean");
    c->record_missing = true;
    memset(&c->record, 0, sizeof c->record);
    c->record.running_build = c->config.factory_build_number;
    if (c->config.factory_image_sha256) {
        c->record.has_running_sha256 = 1;
        memcpy(c->record.running_sha256, c->config.factory_image_sha256, sizeof c->record.running_sha256);
    }
    return OTA_OK;
}

ota_err_t ota_client_init(ota_client_t *c, const ota_config_t *config) {
    ota_err_t err = check_config(config);
    if (err != OTA_OK) return err;
    memset(c, 0, sizeof *c);
    c->config = *config;
    if (!c->config.chunk_bytes) c->config.chunk_bytes = OTA_DEFAULT_CHUNK_BYTES;
    if (!c->config.poll_interval_s) c->config.poll_interval_s = OTA_DEFAULT_POLL_INTERVAL_S;
    if (!c->config.retry_base_ms) c->config.retry_base_ms = OTA_DEFAULT_RETRY_BASE_MS;
    if (!c->config.retry_max_ms) c->config.retry_max_ms = OTA_DEFAULT_RETRY_MAX_MS;
    if (!c->config.max_download_attempts) c->config.max_download_attempts = OTA_DEFAULT_MAX_DOWNLOAD_ATTEMPTS;
    if (!c->config.download_budget_s) c->config.download_budget_s = OTA_DEFAULT_DOWNLOAD_BUDGET_S;
    if (!c->config.trial_timeout_s) c->config.trial_timeout_s = OTA_DEFAULT_TRIAL_TIMEOUT_S;
    if (!c->config.stop_check_bytes) c->config.stop_check_bytes = OTA_DEFAULT_STOP_CHECK_BYTES;
    if (c->config.stop_check_bytes % c->config.chunk_bytes != 0) return OTA_ERR_INVALID_ARG;
    err = load_record(c);
    if (err != OTA_OK) return err;

    ota_boot_info_t boot;
    const ota_slot_port_t *slot = &c->config.ports->slot;
    err = slot->boot_info(slot->ctx, &boot);
    if (err != OTA_OK) return err;
    c->running_slot = boot.running_slot;
    uint64_t now = now_ms(c);
    c->next_check_at = now;
    c->next_report_at = now;
    c->next_download_at = now;
    c->last_byte_at = now;
    ota_record_t *r = &c->record;
    bool booted_target = boot.running_slot == r->target_slot;
    switch ((ota_phase_t)r->phase) {
    case OTA_PHASE_ACTIVATING:
        /* Cut during the switch: if it took and the device rebooted, the trial runs. */
        if (!(booted_target && boot.pending_verify)) break;
        /* fall through */
    case OTA_PHASE_REBOOTING:
    case OTA_PHASE_TRIAL:
        if (booted_target) {
            r->phase = OTA_PHASE_TRIAL;
            c->trial_started_at = now;
            log_line(c, OTA_LOG_INFO, "running build %s as a trial: waiting for the health check", int64_text(r->build_number).text);
        } else {
            /* The bootloader went back to the previous image: the new one never confirmed. */
            set_pending(c, OTA_EVENT_ROLLED_BACK, OTA_REASON_BOOT_FAILED);
            c->booted_after_rollback = true;
            r->phase = OTA_PHASE_IDLE;
        }
        err = save(c);
        break;
    case OTA_PHASE_IDLE:
        if (boot.pending_verify && c->record_missing) {
            /* A trial with no readable record: this client saves one before every switch, so it was
             * lost (an NVS erase on an ESP-IDF upgrade, a layout this image does not read). The
             * health check decides, as for any trial, and its timeout bounds it. The build and the
             * deployment are unknown, so nothing is reported; the next check says what runs. */
            log_line(c, OTA_LOG_WARN, "running an image on trial whose update state was lost: waiting for the health check");
            r->phase = OTA_PHASE_TRIAL;
            r->target_slot = boot.running_slot;
            r->build_number = r->running_build;
            r->deployment_id[0] = '\0';
            r->has_running_sha256 = 0;
            c->trial_started_at = now;
            err = save(c);
        } else if (boot.pending_verify) {
            /* A trial that this device already gave up on (a cut came before the switch back). */
            log_line(c, OTA_LOG_WARN, "the running trial image was refused before this boot: rolling back");
            err = slot->rollback(slot->ctx);
            if (err == OTA_OK) c->config.ports->system.reboot(c->config.ports->system.ctx);
        }
        break;
    case OTA_PHASE_DOWNLOADING:
        log_line(c, OTA_LOG_INFO, "resuming the download of build %s at byte %lu", int64_text(r->build_number).text, (unsigned long)r->offset);
        break;
    default:
        log_line(c, OTA_LOG_WARN, "the saved update state has an unknown phase: starting clean");
        r->phase = OTA_PHASE_IDLE;
        err = save(c);
        break;
    }
    if (r->pending_event != OTA_EVENT_NONE && c->last_event == OTA_EVENT_NONE) {
        c->last_event = (ota_event_t)r->pending_event;
        c->last_reason = (ota_reason_t)r->pending_reason;
    }
    return err;
}

static uint32_t until(const ota_client_t *c, uint64_t at) {
    uint64_t now = now_ms(c);
    if (at <= now) return 0;
    return at - now > UINT32_MAX ? UINT32_MAX : (uint32_t)(at - now);
}

static uint32_t wait_for(const ota_client_t *c) {
    const ota_record_t *r = &c->record;
    uint32_t wait = UINT32_MAX;
    if (r->pending_event) wait = until(c, c->next_report_at);
    uint32_t phase_wait = 0;
    switch ((ota_phase_t)r->phase) {
    case OTA_PHASE_IDLE: phase_wait = until(c, c->next_check_at); break;
    case OTA_PHASE_DOWNLOADING:
        phase_wait = !c->url_valid ? until(c, c->next_check_at) : c->http_open ? 0 : until(c, c->next_download_at);
        break;
    case OTA_PHASE_TRIAL: {
        uint32_t deadline = until(c, c->trial_started_at + (uint64_t)c->config.trial_timeout_s * 1000u);
        /* The application confirms between steps: come back soon enough to act on it. */
        phase_wait = c->confirm_requested || c->reject_requested ? 0 : deadline < 1000 ? deadline : 1000;
        break;
    }
    case OTA_PHASE_ACTIVATING: phase_wait = until(c, c->next_ask_at); break;
    case OTA_PHASE_REBOOTING: phase_wait = 0; break;
    }
    return phase_wait < wait ? phase_wait : wait;
}

ota_err_t ota_client_step(ota_client_t *c, uint32_t *wait_ms) {
    ota_err_t err = OTA_OK;
    ota_record_t *r = &c->record;
    uint64_t now = now_ms(c);
    if (r->pending_event && now >= c->next_report_at) {
        err = report_pending(c);
    } else {
        switch ((ota_phase_t)r->phase) {
        case OTA_PHASE_IDLE:
            if (now >= c->next_check_at) err = check_step(c);
            break;
        case OTA_PHASE_DOWNLOADING:
            if (!c->url_valid) {
                if (now >= c->next_check_at) err = check_step(c);
            } else if (c->http_open || now >= c->next_download_at) {
                err = download_step(c);
            }
            break;
        case OTA_PHASE_ACTIVATING: err = activate_step(c); break;
        case OTA_PHASE_REBOOTING:
            /* The reboot returned (a host that restarts us later): ask again, it is idempotent. */
            c->config.ports->system.reboot(c->config.ports->system.ctx);
            break;
        case OTA_PHASE_TRIAL: err = trial_step(c); break;
        }
    }
    if (wait_ms) *wait_ms = err == OTA_OK ? wait_for(c) : c->config.retry_base_ms;
    return err;
}

uint32_t ota_client_wait_ticks(uint32_t wait_ms, uint32_t tick_rate_hz) {
    uint64_t ticks = (uint64_t)wait_ms * tick_rate_hz / 1000u;
    if (ticks == 0) return 1;
    return ticks > UINT32_MAX ? UINT32_MAX : (uint32_t)ticks;
}

bool ota_client_booted_after_rollback(const ota_client_t *c) {
    return c->booted_after_rollback;
}

bool ota_client_in_trial(const ota_client_t *c) {
    return c->record.phase == OTA_PHASE_TRIAL;
}

ota_err_t ota_client_confirm(ota_client_t *c) {
    if (c->record.phase != OTA_PHASE_TRIAL) return OTA_ERR_STATE;
    c->confirm_requested = true;
    return OTA_OK;
}

ota_err_t ota_client_reject(ota_client_t *c) {
    if (c->record.phase != OTA_PHASE_TRIAL) return OTA_ERR_STATE;
    c->reject_requested = true;
    return OTA_OK;
}

ota_phase_t ota_client_phase(const ota_client_t *c) {
    return (ota_phase_t)c->record.phase;
}

int64_t ota_client_running_build(const ota_client_t *c) {
    return c->record.running_build;
}

bool ota_client_report_pending(const ota_client_t *c) {
    return c->record.pending_event != OTA_EVENT_NONE;
}

ota_event_t ota_client_last_event(const ota_client_t *c, ota_reason_t *reason) {
    if (reason) *reason = c->last_reason;
    return c->last_event;
}

const char *ota_client_last_stop_status(const ota_client_t *c) {
    return c->last_stop_status;
}

const char *ota_client_last_check_status(const ota_client_t *c) {
    return c->last_check_status;
}
