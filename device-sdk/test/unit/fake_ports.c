#include "fake_ports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "json_scan.h"
#include "ota_linux_crypto.h"

static void sha256_hex(const uint8_t *data, size_t len, char out[65]) {
    uint8_t digest[32];
    crypto_hash_sha256(digest, data, len);
    sodium_bin2hex(out, 65, digest, sizeof digest);
}

/* A write that must survive a power cut: the test may cut the power instead. */
static int mutation_allowed(fake_world_t *w) {
    if (w->powered_off) return 0;
    if (w->mutations++ == w->cut_power_at_mutation) {
        w->powered_off = 1;
        return 0;
    }
    return 1;
}

/* ---- HTTP ---- */

int fake_offer_stopped(const fake_world_t *w) {
    return w->stop_after >= 0 && w->delivered >= w->stop_after;
}

static ota_err_t answer(char *resp, size_t cap, ota_http_head_t *head, int status, const char *body) {
    head->status = status;
    if (strlen(body) + 1 > cap) return OTA_ERR_NO_SPACE;
    strcpy(resp, body);
    return OTA_OK;
}

static ota_err_t post_json(void *ctx, const char *url, const char *bearer, const char *body, char *resp, size_t cap, ota_http_head_t *head) {
    fake_world_t *w = ctx;
    (void)bearer;
    if (w->powered_off) return OTA_ERR_IO;
    char text[1024];
    if (strstr(url, "/api/v1/ota/check/")) {
        if (w->check_failures_left > 0) {
            w->check_failures_left--;
            head->retry_after_s = w->check_retry_after_s;
            return answer(resp, cap, head, 503, "{\"detail\":\"busy\"}");
        }
        int64_t current = -1;
        if (!json_get_int(body, "current_build_number", &current)) return answer(resp, cap, head, 400, "{\"detail\":\"bad body\"}");
        if (!json_get_string(body, "current_hash", w->last_current_hash, sizeof w->last_current_hash)) w->last_current_hash[0] = '\0';
        int64_t offset;
        w->last_utc_offset = json_get_int(body, "utc_offset_minutes", &offset) ? (long long)offset : LLONG_MIN;
        int64_t chip_revision, secure_version;
        w->last_chip_revision = json_get_int(body, "chip_revision", &chip_revision) ? (long long)chip_revision : LLONG_MIN;
        w->last_secure_version = json_get_int(body, "secure_version", &secure_version) ? (long long)secure_version : LLONG_MIN;
        json_value_t health;
        w->last_health[0] = '\0';
        if (json_find(body, "health", &health) && health.kind == JSON_NESTED && health.len < sizeof w->last_health) {
            memcpy(w->last_health, health.start, health.len);
            w->last_health[health.len] = '\0';
        }
        json_value_t formats;
        w->last_check_delta_formats = json_find(body, "delta_formats", &formats) && formats.kind == JSON_NESTED &&
                                      formats.len == strlen("[\"detools-sequential-heatshrink-8-7\"]") &&
                                      memcmp(formats.start, "[\"detools-sequential-heatshrink-8-7\"]", formats.len) == 0;
        /* A stopped offer is not offered again (a paused or cancelled deployment offers nothing). */
        if (w->build == 0 || current >= w->build || fake_offer_stopped(w)) {
            return answer(resp, cap, head, 200, "{\"update_available\":false,\"status\":\"up_to_date\",\"message\":\"\",\"poll_after_seconds\":60}");
        }
        char checksum[65];
        sha256_hex(w->image, w->image_size, checksum);
        char signature[140] = "";
        if (w->signature_b64[0]) snprintf(signature, sizeof signature, ",\"signature\":\"%s\",\"signing_key_id\":\"k1\"", w->signature_b64);
        /* The patch, as the service offers it: to a check that applies the format from the patch's base. */
        char patch[400] = "", base_hex[65];
        sodium_bin2hex(base_hex, sizeof base_hex, w->patch_base_sha256, sizeof w->patch_base_sha256);
        if (w->patch && w->last_check_delta_formats && strcmp(w->last_current_hash, base_hex) == 0 && w->patch_offers_left != 0) {
            if (w->patch_offers_left > 0) w->patch_offers_left--;
            char patch_hex[65];
            sha256_hex(w->patch, w->patch_size, patch_hex);
            snprintf(patch, sizeof patch,
                     ",\"patch\":{\"url\":\"http://fake/download?v=%d&patch=1\",\"size\":%zu,\"sha256\":\"%s\",\"base_sha256\":\"%s\","
                     "\"format\":\"detools-sequential-heatshrink-8-7\"}",
                     w->url_version, w->patch_size, patch_hex, base_hex);
        }
        snprintf(text, sizeof text,
                 "{\"update_available\":true,\"build_number\":%lld,\"version\":\"2.0\",\"url\":\"http://fake/download?v=%d\","
                 "\"checksum\":\"%s\",\"size\":%zu,\"deployment_id\":\"d0d0d0d0-0000-4000-8000-000000000001\","
                 "\"security_mode\":\"\"%s%s,\"poll_after_seconds\":60}",
                 w->build, w->url_version, checksum, w->image_size, signature, patch);
        return answer(resp, cap, head, 200, text);
    }
    if (strstr(url, "/api/v1/ota/offer/")) {
        if (w->offer_route_missing) return answer(resp, cap, head, 404, "{\"detail\":\"no route\"}");
        if (w->offer_failures_left > 0) {
            w->offer_failures_left--;
            return answer(resp, cap, head, 503, "{\"detail\":\"busy\"}");
        }
        if (w->offer_refused) return answer(resp, cap, head, 401, "{\"detail\":\"token revoked\"}");
        char deployment[64];
        if (!json_get_string(body, "deployment_id", deployment, sizeof deployment)) return answer(resp, cap, head, 400, "{\"detail\":\"bad body\"}");
        w->asks++;
        if (!fake_offer_stopped(w)) return answer(resp, cap, head, 200, "{\"standing\":true}");
        if (w->delivered_at_stop < 0) w->delivered_at_stop = w->delivered;
        snprintf(text, sizeof text, "{\"standing\":false,\"status\":\"%s\",\"hold\":%s,\"message\":\"stopped\"}", w->stop_status,
                 w->stop_hold ? "true" : "false");
        return answer(resp, cap, head, 200, text);
    }
    if (strstr(url, "/api/v1/ota/status/")) {
        if (w->status_failures_left > 0) {
            w->status_failures_left--;
            return answer(resp, cap, head, 503, "{\"detail\":\"busy\"}");
        }
        if (w->report_count == FAKE_MAX_REPORTS) return answer(resp, cap, head, 500, "{\"detail\":\"too many\"}");
        fake_report_t *report = &w->reports[w->report_count++];
        memset(report, 0, sizeof *report);
        json_get_string(body, "event", report->event, sizeof report->event);
        json_get_string(body, "reason", report->reason, sizeof report->reason);
        json_get_string(body, "deployment_id", report->deployment, sizeof report->deployment);
        int64_t build = -1;
        report->build = json_get_int(body, "build_number", &build) ? build : -1;
        json_value_t detail;
        if (json_find(body, "detail", &detail) && detail.kind == JSON_NESTED && detail.len < sizeof report->detail) {
            memcpy(report->detail, detail.start, detail.len);
        }
        snprintf(text, sizeof text, "{\"accepted\":true,\"final_status\":\"%s\"}", report->event);
        return answer(resp, cap, head, 200, text);
    }
    return answer(resp, cap, head, 404, "{\"detail\":\"no route\"}");
}

static ota_err_t get_open(void *ctx, const char *url, uint32_t range_start, const char *if_range, ota_http_head_t *head) {
    fake_world_t *w = ctx;
    memset(head, 0, sizeof *head);
    head->content_length = head->range_start = head->total_size = -1;
    if (w->powered_off) return OTA_ERR_IO;
    if (w->get_failures_left > 0) {
        w->get_failures_left--;
        return OTA_ERR_IO;
    }
    if (w->get_unavailable_left > 0) {
        w->get_unavailable_left--;
        head->status = 503;
        head->retry_after_s = w->get_retry_after_s;
        return OTA_OK;
    }
    w->gets++;
    if (w->refuse_stopped_downloads && fake_offer_stopped(w)) {
        head->status = w->stop_hold ? 409 : 410;
        return OTA_OK;
    }
    const char *version = strstr(url, "?v=");
    if (!version || atoi(version + 3) != w->url_version) {
        head->status = 403;
        return OTA_OK;
    }
    int of_patch = strstr(url, "&patch=1") != NULL;
    if (of_patch) w->patch_gets++;
    if (of_patch && (w->patch_gone || !w->patch)) {
        head->status = 404;
        return OTA_OK;
    }
    w->body = of_patch ? w->patch : w->image;
    w->body_size = of_patch ? w->patch_size : w->image_size;
    char etag[72], checksum[65];
    sha256_hex(w->body, w->body_size, checksum);
    snprintf(etag, sizeof etag, "\"%s\"", checksum);
    if (w->etag) snprintf(etag, sizeof etag, "%s", w->etag);
    w->get_open = 1;
    if (range_start > 0 && !w->ignore_ranges && (!if_range[0] || strcmp(if_range, etag) == 0)) {
        if (range_start >= w->body_size) {
            head->status = 416;
            head->total_size = (int64_t)w->body_size;
            w->get_open = 0;
            return OTA_OK;
        }
        head->status = 206;
        head->range_start = range_start;
        head->total_size = (int64_t)w->body_size;
        head->content_length = (int64_t)(w->body_size - range_start);
        w->position = range_start;
    } else {
        head->status = 200;
        head->content_length = w->omit_content_length ? -1 : (int64_t)w->body_size;
        w->position = 0;
    }
    w->last_range_start = w->position;
    memcpy(head->etag, etag, strlen(etag) + 1);
    return OTA_OK;
}

static ota_err_t get_read(void *ctx, uint8_t *buf, size_t cap, size_t *n) {
    fake_world_t *w = ctx;
    *n = 0;
    if (w->powered_off || !w->get_open) return OTA_ERR_IO;
    if ((size_t)w->position == w->body_size) return OTA_OK;
    /* Pieces of odd sizes, as a network delivers them. */
    size_t piece = 1 + (w->seed = w->seed * 1103515245u + 12345u) % 700u;
    if (piece > cap) piece = cap;
    if (piece > w->body_size - (size_t)w->position) piece = w->body_size - (size_t)w->position;
    long end = w->position + (long)piece;
    long limits[] = {w->cut_link_at, w->cut_power_at, w->expire_url_at};
    for (int i = 0; i < 3; i++) {
        if (limits[i] < 0 || w->delivered + (end - w->position) <= limits[i]) continue;
        /* Deliver exactly up to the limit (counted over every GET), then the fault. */
        long allowed = limits[i] - w->delivered;
        if (allowed > 0) {
            piece = (size_t)allowed;
            end = w->position + allowed;
            break;
        }
        w->get_open = 0;
        if (i == 0) w->cut_link_at = -1;
        if (i == 1) {
            w->cut_power_at = -1;
            w->powered_off = 1;
        }
        if (i == 2) {
            w->expire_url_at = -1;
            w->url_version++;
        }
        return OTA_ERR_IO;
    }
    memcpy(buf, w->body + w->position, piece);
    if (w->tamper_at >= w->position && w->tamper_at < end) buf[w->tamper_at - w->position] ^= 0x5a;
    w->position = end;
    w->delivered += (long)piece;
    *n = piece;
    return OTA_OK;
}

static void get_close(void *ctx) {
    fake_world_t *w = ctx;
    w->get_open = 0;
}

/* ---- flash ---- */

static unsigned inactive(const fake_world_t *w) {
    return 1u - w->active;
}

static ota_err_t boot_info(void *ctx, ota_boot_info_t *info) {
    fake_world_t *w = ctx;
    info->running_slot = (uint8_t)w->active;
    info->pending_verify = w->trial != 0;
    return OTA_OK;
}

static ota_err_t slot_open(void *ctx, uint32_t image_size, uint32_t resume_offset) {
    fake_world_t *w = ctx;
    if (image_size > FAKE_SLOT_BYTES) return OTA_ERR_NO_SPACE;
    if (!mutation_allowed(w)) return OTA_ERR_IO;
    unsigned slot = inactive(w);
    if (resume_offset % 4096u != 0) w->resumes_inside_a_sector++;
    /* Erased from the resume on; as esp_ota_write, sequentially, only from the next sector start. */
    uint32_t erase_from = w->slot_appends ? (resume_offset + 4095u) / 4096u * 4096u : resume_offset;
    memset(w->slot_live[slot] + erase_from, 0xff, FAKE_SLOT_BYTES - erase_from);
    memcpy(w->slot_durable[slot], w->slot_live[slot], FAKE_SLOT_BYTES);
    w->slot_next = resume_offset;
    return OTA_OK;
}

static ota_err_t slot_write(void *ctx, uint32_t offset, const uint8_t *data, size_t len) {
    fake_world_t *w = ctx;
    if (w->powered_off || offset + len > FAKE_SLOT_BYTES) return OTA_ERR_IO;
    if (w->slot_appends && offset != w->slot_next) return OTA_ERR_IO;
    if (w->slot_appends) {
        /* NOR flash, written at once (esp_ota_write holds nothing back): a write clears bits; it
         * cannot set one an earlier write cleared. */
        for (size_t i = 0; i < len; i++) w->slot_live[inactive(w)][offset + i] &= data[i];
        memcpy(w->slot_durable[inactive(w)] + offset, w->slot_live[inactive(w)] + offset, len);
    } else {
        memcpy(w->slot_live[inactive(w)] + offset, data, len);
    }
    w->slot_next = offset + (uint32_t)len;
    return OTA_OK;
}

static ota_err_t slot_read(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    fake_world_t *w = ctx;
    if (w->powered_off || offset + len > FAKE_SLOT_BYTES) return OTA_ERR_IO;
    memcpy(data, w->slot_live[inactive(w)] + offset, len);
    w->slot_bytes_read += (long)len;
    return OTA_OK;
}

static ota_err_t slot_read_running(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    fake_world_t *w = ctx;
    if (w->powered_off) return OTA_ERR_IO;
    if ((uint64_t)offset + len > FAKE_SLOT_BYTES) return OTA_ERR_INVALID_ARG;
    memcpy(data, w->slot_live[w->active] + offset, len);
    w->running_bytes_read += (long)len;
    return OTA_OK;
}

static ota_err_t slot_flush(void *ctx) {
    fake_world_t *w = ctx;
    if (!mutation_allowed(w)) return OTA_ERR_IO;
    memcpy(w->slot_durable[inactive(w)], w->slot_live[inactive(w)], FAKE_SLOT_BYTES);
    return OTA_OK;
}

static ota_err_t slot_finish(void *ctx) {
    fake_world_t *w = ctx;
    if (!mutation_allowed(w)) return OTA_ERR_IO;
    memcpy(w->slot_durable[inactive(w)], w->slot_live[inactive(w)], FAKE_SLOT_BYTES);
    return OTA_OK;
}

static ota_err_t slot_activate(void *ctx) {
    fake_world_t *w = ctx;
    if (!mutation_allowed(w)) return OTA_ERR_IO;
    w->previous = w->active;
    w->active = inactive(w);
    w->trial = 1;
    w->attempts = 0;
    return OTA_OK;
}

static ota_err_t slot_mark_valid(void *ctx) {
    fake_world_t *w = ctx;
    if (w->mark_valid_failures_left > 0) {
        w->mark_valid_failures_left--;
        return OTA_ERR_IO;
    }
    if (!mutation_allowed(w)) return OTA_ERR_IO;
    w->trial = 0;
    return OTA_OK;
}

static ota_err_t slot_rollback(void *ctx) {
    fake_world_t *w = ctx;
    if (w->rollback_failures_left > 0) {
        w->rollback_failures_left--;
        return OTA_ERR_IO;
    }
    if (!mutation_allowed(w)) return OTA_ERR_IO;
    w->active = w->previous;
    w->trial = 0;
    return OTA_OK;
}

/* ---- state ---- */

static ota_err_t state_load(void *ctx, void *buf, size_t cap, size_t *len) {
    fake_world_t *w = ctx;
    *len = w->record_len < cap ? w->record_len : cap;
    memcpy(buf, w->record, *len);
    return OTA_OK;
}

static ota_err_t state_save(void *ctx, const void *buf, size_t len) {
    fake_world_t *w = ctx;
    if (len > sizeof w->record) return OTA_ERR_NO_SPACE;
    if (!mutation_allowed(w)) return OTA_ERR_IO;
    memcpy(w->record, buf, len);
    w->record_len = len;
    return OTA_OK;
}

/* ---- system ---- */

static uint64_t now_ms(void *ctx) {
    return ((fake_world_t *)ctx)->now;
}

static uint32_t random32(void *ctx) {
    fake_world_t *w = ctx;
    return w->seed = w->seed * 1664525u + 1013904223u;
}

static void reboot(void *ctx) {
    ((fake_world_t *)ctx)->reboot_requested = 1;
}

static void log_line(void *ctx, ota_log_level_t level, const char *message) {
    (void)ctx;
    if (getenv("OTA_TEST_VERBOSE")) fprintf(stderr, "  [%d] %s\n", (int)level, message);
}

void fake_world_init(fake_world_t *w) {
    memset(w, 0, sizeof *w);
    w->cut_link_at = w->cut_power_at = w->tamper_at = w->expire_url_at = -1;
    w->cut_power_at_mutation = -1;
    w->stop_after = w->delivered_at_stop = -1;
    w->max_trial_boots = 1;
    w->check_retry_after_s = 7;
    w->seed = 12345;
    w->now = 1000;
    memset(w->slot_live, 0xff, sizeof w->slot_live);
    memcpy(w->slot_live[0], "factory image", 13);
    memcpy(w->slot_durable, w->slot_live, sizeof w->slot_live);
    w->ports.http = (ota_http_port_t){w, post_json, get_open, get_read, get_close, NULL};
    w->ports.slot = (ota_slot_port_t){w, boot_info, slot_open, slot_write, slot_read, slot_flush, slot_finish, slot_activate, slot_mark_valid,
                                      slot_rollback, slot_read_running};
    w->patch_offers_left = -1;
    w->ports.state = (ota_state_port_t){w, state_load, state_save};
    w->ports.crypto = ota_linux_crypto_port();
    w->ports.system = (ota_system_port_t){w, now_ms, random32, reboot, log_line};
}

void fake_reboot(fake_world_t *w) {
    memcpy(w->slot_live, w->slot_durable, sizeof w->slot_live);
    w->powered_off = 0;
    w->reboot_requested = 0;
    w->get_open = 0;
    if (w->trial) {
        /* The bootloader: a trial that used up its boots is abandoned for the previous slot. */
        if (++w->attempts > w->max_trial_boots) {
            w->active = w->previous;
            w->trial = 0;
        }
    }
}
