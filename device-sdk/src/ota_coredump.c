/*
 * The core dump sender (ota/ota_coredump.h): hashes the dump a piece per step, then sends it a
 * piece per step to POST /api/v1/ota/coredump/, going on from where the service says it stands,
 * and erases it once the service answers that it has it whole (docs/api.md, "Core dumps").
 */
#include "ota/ota_coredump.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_scan.h"
#include "ota_internal.h"

static void log_line(const ota_coredump_sender_t *s, ota_log_level_t level, const char *format, ...) {
    va_list args;
    va_start(args, format);
    ota_vlog(s->config, level, format, args);
    va_end(args);
}

const char *ota_coredump_outcome_name(ota_coredump_outcome_t outcome) {
    switch (outcome) {
    case OTA_COREDUMP_NONE: return "none";
    case OTA_COREDUMP_PENDING: return "pending";
    case OTA_COREDUMP_SENT: return "sent";
    case OTA_COREDUMP_REFUSED: return "refused";
    case OTA_COREDUMP_KEPT: return "kept";
    }
    return "?";
}

ota_coredump_outcome_t ota_coredump_outcome(const ota_coredump_sender_t *s) {
    return s->outcome;
}

ota_err_t ota_coredump_begin(ota_coredump_sender_t *s, const ota_config_t *config, const ota_coredump_port_t *dump) {
    if (!s || !config || !config->ports || !dump || !dump->size || !dump->read || !dump->erase) return OTA_ERR_INVALID_ARG;
    memset(s, 0, sizeof *s);
    s->config = config;
    s->dump = dump;
    if (!config->ports->http.post_bytes || config->ports->crypto.sha256_state_size > sizeof s->sha256_state) return OTA_ERR_INVALID_ARG;
    ota_err_t err = dump->size(dump->ctx, &s->size);
    if (err != OTA_OK) return err;
    if (s->size == 0) {
        s->outcome = OTA_COREDUMP_NONE;
        return OTA_OK;
    }
    if (s->size > OTA_COREDUMP_MAX_BYTES) {
        log_line(s, OTA_LOG_WARN, "core dump of %lu bytes is larger than the service takes; erased", (unsigned long)s->size);
        s->outcome = OTA_COREDUMP_REFUSED;
        return dump->erase(dump->ctx);
    }
    config->ports->crypto.sha256_init(s->sha256_state);
    s->outcome = OTA_COREDUMP_PENDING;
    return OTA_OK;
}

/* Reads the piece of the dump from `offset`; answers its length. */
static ota_err_t read_piece(ota_coredump_sender_t *s, uint32_t offset, size_t *len) {
    uint32_t left = s->size - offset;
    *len = left < OTA_COREDUMP_PIECE_BYTES ? left : OTA_COREDUMP_PIECE_BYTES;
    return s->dump->read(s->dump->ctx, offset, s->piece, *len);
}

static ota_err_t hash_step(ota_coredump_sender_t *s) {
    const ota_crypto_port_t *crypto = &s->config->ports->crypto;
    size_t len;
    ota_err_t err = read_piece(s, s->hashed, &len);
    if (err != OTA_OK) return err;
    crypto->sha256_update(s->sha256_state, s->piece, len);
    s->hashed += (uint32_t)len;
    if (s->hashed == s->size) {
        uint8_t digest[32];
        crypto->sha256_final(s->sha256_state, digest);
        for (size_t i = 0; i < 32; i++) snprintf(s->sha256_hex + 2 * i, 3, "%02x", digest[i]);
    }
    return OTA_OK;
}

/* Ends the sender's work in this boot; a dump the service took, or refused for good, is erased. */
static ota_err_t finish(ota_coredump_sender_t *s, ota_coredump_outcome_t outcome) {
    s->outcome = outcome;
    log_line(s, outcome == OTA_COREDUMP_SENT ? OTA_LOG_INFO : OTA_LOG_WARN, "core dump of %lu bytes %s", (unsigned long)s->size,
             ota_coredump_outcome_name(outcome));
    return outcome == OTA_COREDUMP_SENT || outcome == OTA_COREDUMP_REFUSED ? s->dump->erase(s->dump->ctx) : OTA_OK;
}

static ota_err_t failed(ota_coredump_sender_t *s, uint32_t retry_after_s, uint32_t *wait_ms) {
    if (++s->failures >= OTA_COREDUMP_MAX_FAILURES) return finish(s, OTA_COREDUMP_KEPT);
    *wait_ms = ota_backoff_ms(s->config, s->failures, retry_after_s);
    return OTA_OK;
}

static ota_err_t send_step(ota_coredump_sender_t *s, uint32_t *wait_ms) {
    const ota_config_t *config = s->config;
    size_t len;
    ota_err_t err = read_piece(s, s->offset, &len);
    if (err != OTA_OK) return err;
    int n = snprintf(s->url, sizeof s->url, "%s/api/v1/ota/coredump/?sha256=%s&size=%lu&offset=%lu%s%s", config->server_url, s->sha256_hex,
                     (unsigned long)s->size, (unsigned long)s->offset, config->device_id ? "&device_id=" : "", config->device_id ? config->device_id : "");
    if (n < 0 || (size_t)n >= sizeof s->url) return OTA_ERR_NO_SPACE;
    ota_http_head_t head;
    memset(&head, 0, sizeof head);
    s->response[0] = '\0';
    const ota_http_port_t *http = &config->ports->http;
    err = http->post_bytes(http->ctx, s->url, config->token, s->piece, len, s->response, sizeof s->response, &head);
    if (err == OTA_ERR_IO) return failed(s, 0, wait_ms);
    if (head.status == 429 || head.status == 408 || head.status >= 500) {
        /* Past the hour's allowance the dump waits for the next boot rather than the Retry-After. */
        if (head.status == 429 && head.retry_after_s > config->retry_max_ms / 1000u) return finish(s, OTA_COREDUMP_KEPT);
        return failed(s, head.retry_after_s, wait_ms);
    }
    if (head.status == 400 || head.status == 413) {
        char detail[160] = "";
        json_get_string(s->response, "detail", detail, sizeof detail);
        log_line(s, OTA_LOG_WARN, "the service refused the core dump: %s", detail);
        return finish(s, OTA_COREDUMP_REFUSED);
    }
    int64_t received = -1;
    bool complete = false;
    if (err != OTA_OK || head.status != 200 || !json_get_int(s->response, "received", &received) || !json_get_bool(s->response, "complete", &complete) ||
        received < 0 || received > (int64_t)s->size) {
        /* The token refused, a device the service does not know yet, or an answer not understood. */
        log_line(s, OTA_LOG_WARN, "core dump not sent: HTTP %d", head.status);
        return finish(s, OTA_COREDUMP_KEPT);
    }
    s->failures = 0;
    if (complete) return finish(s, OTA_COREDUMP_SENT);
    s->offset = (uint32_t)received;
    return OTA_OK;
}

ota_err_t ota_coredump_step(ota_coredump_sender_t *s, uint32_t *wait_ms) {
    if (!s || !wait_ms) return OTA_ERR_INVALID_ARG;
    *wait_ms = 0;
    if (s->outcome != OTA_COREDUMP_PENDING) return OTA_ERR_STATE;
    if (s->hashed < s->size) return hash_step(s);
    return send_step(s, wait_ms);
}
