/*
 * The core dump sender (ota/ota_coredump.h) against a fake service that keeps what it received
 * as the real one does: each answer says how many bytes from the start it holds, a piece anywhere
 * else changes nothing, and the dump is whole when its SHA-256 matches the one it was named by.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "ota/ota_coredump.h"
#include "ota_linux_crypto.h"
#include "test_support.h"

#define DUMP_MAX 20000

typedef struct {
    /* The device's flash */
    uint8_t dump[DUMP_MAX];
    uint32_t dump_size;
    int erased;
    /* The service */
    uint8_t held[DUMP_MAX];
    uint32_t received;
    char named_sha256[65];
    int requests;
    int cut_every;         /* every Nth request breaks the connection (no answer); 0: never */
    int status;            /* answer this status to every request (429, 400, 401, ...); 0: behave */
    uint32_t retry_after_s;
    int stored;            /* the dump arrived whole with its SHA-256 */
    uint64_t now;
    char last_url[OTA_URL_MAX];
} fake_t;

static ota_err_t dump_size(void *ctx, uint32_t *size) {
    fake_t *f = ctx;
    *size = f->erased ? 0 : f->dump_size;
    return OTA_OK;
}

static ota_err_t dump_read(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    fake_t *f = ctx;
    if (offset + len > f->dump_size) return OTA_ERR_INVALID_ARG;
    memcpy(data, f->dump + offset, len);
    return OTA_OK;
}

static ota_err_t dump_erase(void *ctx) {
    ((fake_t *)ctx)->erased = 1;
    return OTA_OK;
}

static long query_number(const char *url, const char *name) {
    const char *at = strstr(url, name);
    return at ? strtol(at + strlen(name), NULL, 10) : -1;
}

static ota_err_t post_bytes(void *ctx, const char *url, const char *bearer, const uint8_t *body, size_t len, char *resp, size_t cap, ota_http_head_t *head) {
    fake_t *f = ctx;
    (void)bearer;
    snprintf(f->last_url, sizeof f->last_url, "%s", url);
    f->requests++;
    if (f->cut_every && f->requests % f->cut_every == 0) return OTA_ERR_IO;
    head->status = f->status ? f->status : 200;
    head->retry_after_s = f->retry_after_s;
    if (f->status) {
        snprintf(resp, cap, "{\"detail\":\"refused by the test\"}");
        return OTA_OK;
    }
    const char *sha = strstr(url, "sha256=");
    if (sha) snprintf(f->named_sha256, sizeof f->named_sha256, "%.64s", sha + 7);
    long size = query_number(url, "size="), offset = query_number(url, "offset=");
    if (offset == (long)f->received && f->received + len <= (uint32_t)size) {
        memcpy(f->held + f->received, body, len);
        f->received += (uint32_t)len;
    }
    int complete = 0;
    if (f->received == (uint32_t)size) {
        uint8_t digest[32];
        char hex[65];
        crypto_hash_sha256(digest, f->held, f->received);
        sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
        complete = f->stored = strcmp(hex, f->named_sha256) == 0;
    }
    snprintf(resp, cap, "{\"received\":%lu,\"complete\":%s%s}", (unsigned long)f->received, complete ? "true" : "false",
             complete ? ",\"crash_id\":\"00000000-0000-4000-8000-000000000000\"" : "");
    return OTA_OK;
}

static uint64_t now_ms(void *ctx) {
    return ((fake_t *)ctx)->now;
}

static uint32_t random32(void *ctx) {
    (void)ctx;
    return 7;
}

static void reboot(void *ctx) {
    (void)ctx;
}

typedef struct {
    fake_t fake;
    ota_ports_t ports;
    ota_config_t config;
    ota_coredump_port_t dump;
    ota_coredump_sender_t sender;
} world_t;

static world_t *world(uint32_t size, const char *device_id) {
    static world_t w;
    memset(&w, 0, sizeof w);
    w.fake.dump_size = size;
    randombytes_buf(w.fake.dump, size);
    w.ports.http.ctx = &w.fake;
    w.ports.http.post_bytes = post_bytes;
    w.ports.crypto = ota_linux_crypto_port();
    w.ports.system = (ota_system_port_t){&w.fake, now_ms, random32, reboot, NULL};
    w.config = (ota_config_t){.server_url = "http://service", .token = "t", .device_id = device_id, .retry_base_ms = 1000, .retry_max_ms = 60000, .ports = &w.ports};
    w.dump = (ota_coredump_port_t){&w.fake, dump_size, dump_read, dump_erase};
    return &w;
}

/* Steps the sender to its end (at most `limit` steps), letting each wait pass; answers the outcome. */
static ota_coredump_outcome_t run(world_t *w, int limit) {
    if (ota_coredump_begin(&w->sender, &w->config, &w->dump) != OTA_OK) return (ota_coredump_outcome_t)-1;
    for (int i = 0; i < limit && ota_coredump_outcome(&w->sender) == OTA_COREDUMP_PENDING; i++) {
        uint32_t wait_ms = 0;
        if (ota_coredump_step(&w->sender, &wait_ms) != OTA_OK) return (ota_coredump_outcome_t)-1;
        w->fake.now += wait_ms;
    }
    return ota_coredump_outcome(&w->sender);
}

static void test_sent_whole_then_erased(void) {
    world_t *w = world(10000, "unit-1");
    EXPECT("sent", run(w, 100) == OTA_COREDUMP_SENT);
    EXPECT("stored whole", w->fake.stored && w->fake.received == 10000);
    EXPECT("erased once stored", w->fake.erased);
    EXPECT("in pieces", w->fake.requests == 3);
    EXPECT("names the device", strstr(w->fake.last_url, "&device_id=unit-1") != NULL);
    const char *path = "http://service/api/v1/ota/coredump/?sha256=";
    EXPECT("at the service's path", strncmp(w->fake.last_url, path, strlen(path)) == 0);
}

static void test_resumes_after_cuts(void) {
    world_t *w = world(19000, NULL);
    w->fake.cut_every = 2;
    EXPECT("sent through cuts", run(w, 100) == OTA_COREDUMP_SENT);
    EXPECT("stored whole", w->fake.stored);
    EXPECT("no device_id with a device's own token", strstr(w->fake.last_url, "device_id") == NULL);
}

static void test_next_boot_goes_on(void) {
    /* The service holds two pieces from a boot that lost its connection for good. */
    world_t *w = world(12000, "unit-2");
    w->fake.cut_every = 1;
    EXPECT("kept when no request goes through", run(w, 100) == OTA_COREDUMP_KEPT);
    EXPECT("not erased", !w->fake.erased);
    w->fake.cut_every = 0;
    w->fake.received = 8192;
    memcpy(w->fake.held, w->fake.dump, 8192);
    int before = w->fake.requests;
    EXPECT("sent at the next boot", run(w, 100) == OTA_COREDUMP_SENT);
    EXPECT("from where the service stood: one piece at 0, then the last", w->fake.requests - before == 2);
    EXPECT("stored whole", w->fake.stored);
}

static void test_refused_for_good_is_erased(void) {
    world_t *w = world(5000, "unit-3");
    w->fake.status = 400;
    EXPECT("refused", run(w, 100) == OTA_COREDUMP_REFUSED);
    EXPECT("erased: it would never be taken", w->fake.erased);
}

static void test_kept_when_not_taken_now(void) {
    const int statuses[] = {401, 404, 429, 503};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        world_t *w = world(5000, "unit-4");
        w->fake.status = statuses[i];
        w->fake.retry_after_s = statuses[i] == 429 ? 600 : 0;
        EXPECT("kept", run(w, 100) == OTA_COREDUMP_KEPT);
        EXPECT("not erased", !w->fake.erased);
        EXPECT("a bounded number of tries", w->fake.requests <= (int)OTA_COREDUMP_MAX_FAILURES);
    }
}

static void test_backs_off_between_failures(void) {
    world_t *w = world(5000, "unit-5");
    w->fake.status = 503;
    run(w, 100);
    EXPECT("waited between tries", w->fake.now >= 1000u * 0.8 * (1 + 2 + 4 + 8 + 16 + 32 + 60));
}

static void test_no_dump(void) {
    world_t *w = world(0, "unit-6");
    EXPECT("none", run(w, 10) == OTA_COREDUMP_NONE);
    EXPECT("nothing sent", w->fake.requests == 0);
    world_t *without = world(100, "unit-7");
    without->ports.http.post_bytes = NULL;
    ota_coredump_sender_t sender;
    EXPECT("refused without post_bytes", ota_coredump_begin(&sender, &without->config, &without->dump) == OTA_ERR_INVALID_ARG);
}

void coredump_tests(void);

void coredump_tests(void) {
    test_sent_whole_then_erased();
    test_resumes_after_cuts();
    test_next_boot_goes_on();
    test_refused_for_good_is_erased();
    test_kept_when_not_taken_now();
    test_backs_off_between_failures();
    test_no_dump();
}
