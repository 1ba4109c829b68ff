/*
 * The core's update state machine against fake ports: the whole lifecycle, every failure reason,
 * link and power cuts at every position of a download, and a power cut before every write that
 * must survive one. Each run checks the invariants a fleet depends on: `confirmed` only for the
 * offered bytes, the boot choice always on a whole image, and at most one chunk fetched again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include <sodium.h>

#include "fake_ports.h"
#include "ota_chunk.h"
#include "patch_maker.h"
#include "test_support.h"

#define IMAGE_BYTES (40 * 1024 + 123)
#define CHUNK OTA_DEFAULT_CHUNK_BYTES

static uint8_t image[IMAGE_BYTES];
static uint8_t public_key[32], secret_key[64];
static fake_world_t world;

typedef struct {
    ota_client_t client;
    ota_config_t config;
    uint8_t keys[2][32];
    int health; /* 1: the health check passes (confirmed at every step), 2: passes and confirms once, 0: never, -1: refuses */
    int confirmed;
} device_t;

static device_t device;

static void make_device(int signed_build, int health) {
    fake_world_init(&world);
    world.image = image;
    world.image_size = sizeof image;
    world.build = 7;
    if (signed_build) {
        uint8_t signature[64];
        crypto_sign_detached(signature, NULL, image, sizeof image, secret_key);
        sodium_bin2base64(world.signature_b64, sizeof world.signature_b64, signature, sizeof signature, sodium_base64_VARIANT_ORIGINAL);
    }
    memset(&device, 0, sizeof device);
    memcpy(device.keys[0], public_key, 32);
    device.health = health;
    device.config = (ota_config_t){
        .server_url = "http://fake",
        .token = "ota_prj_test",
        .device_id = "unit-1",
        .framework = "esp_idf",
        .chip_family = "esp32",
        .nvs_schema_version = -1,
        .signing_keys = (const uint8_t(*)[32])device.keys,
        .signing_key_count = 1,
        .trial_timeout_s = 30,
        .ports = &world.ports,
    };
}

static int settled(const ota_client_t *client) {
    const char *status = ota_client_last_check_status(client);
    return ota_client_phase(client) == OTA_PHASE_IDLE && !ota_client_report_pending(client) &&
           (ota_client_last_event(client, NULL) != OTA_EVENT_NONE || (status[0] && strcmp(status, "offered") != 0));
}

/* Steps the device (booting it first unless `booted`, rebooting it when it asks or loses power) until it settles. */
static int run_device_from(int booted, int max_steps) {
    for (int steps = 0; steps < max_steps; steps++) {
        if (!booted || world.powered_off || world.reboot_requested) {
            if (booted) fake_reboot(&world);
            booted = 1;
            if (ota_client_init(&device.client, &device.config) != OTA_OK && !world.powered_off) return -1;
            continue;
        }
        if (ota_client_in_trial(&device.client)) {
            if (device.health == 1 || (device.health == 2 && !device.confirmed)) ota_client_confirm(&device.client);
            if (device.health < 0) ota_client_reject(&device.client);
            device.confirmed = device.health > 0;
        }
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
        if (settled(&device.client) && !world.powered_off && !world.reboot_requested) return steps;
    }
    return -1;
}

static int run_device(int max_steps) {
    return run_device_from(0, max_steps);
}

/* Steps a booted device (init first), with nothing rebooting it, until `done` holds or `max_steps` pass. */
static void step_until(int (*done)(void), int max_steps) {
    for (int steps = 0; steps < max_steps && !done(); steps++) {
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
    }
}

static const fake_report_t *last_terminal(void) {
    for (int i = world.report_count - 1; i >= 0; i--) {
        const char *event = world.reports[i].event;
        if (!strcmp(event, "confirmed") || !strcmp(event, "failed") || !strcmp(event, "rolled_back")) return &world.reports[i];
    }
    return NULL;
}

static int count_reports(const char *event) {
    int n = 0;
    for (int i = 0; i < world.report_count; i++) n += !strcmp(world.reports[i].event, event);
    return n;
}

/* What every run must leave: the boot on a whole image, confirmed only for the offered bytes, and
 * the outcome the run calls for (a fault of the link or the power never fails an update). */
static void check_invariants(const char *name, const char *expected_event) {
    const fake_report_t *terminal = last_terminal();
    EXPECT(name, terminal != NULL);
    if (!terminal) return;
    EXPECT(name, !strcmp(terminal->event, expected_event));
    EXPECT(name, world.trial == 0);
    if (!strcmp(terminal->event, "confirmed")) {
        EXPECT(name, memcmp(world.slot_durable[world.active], image, sizeof image) == 0);
        EXPECT(name, ota_client_running_build(&device.client) == 7 && terminal->build == 7);
    } else {
        EXPECT(name, memcmp(world.slot_durable[world.active], "factory image", 13) == 0);
        EXPECT(name, ota_client_running_build(&device.client) == 0);
        EXPECT(name, terminal->reason[0] != '\0');
    }
    /* No confirmed report, ever, while the running image differs from the offer. */
    if (count_reports("confirmed") > 0) EXPECT(name, memcmp(world.slot_durable[world.active], image, sizeof image) == 0);
}

/* The wait between steps in RTOS ticks: never 0, or the idle task (and its watchdog) would never
 * run between steps that do not wait; at 100 Hz one millisecond is 0 ticks by plain division. */
static void test_wait_ticks(void) {
    EXPECT("wait ticks: 1 ms at 100 Hz is one tick, not none", ota_client_wait_ticks(1, 100) == 1);
    EXPECT("wait ticks: no wait is still one tick", ota_client_wait_ticks(0, 100) == 1 && ota_client_wait_ticks(0, 1000) == 1);
    EXPECT("wait ticks: 15 ms at 100 Hz", ota_client_wait_ticks(15, 100) == 1);
    EXPECT("wait ticks: a second at 100 Hz", ota_client_wait_ticks(1000, 100) == 100);
    EXPECT("wait ticks: 25 ms at 1000 Hz", ota_client_wait_ticks(25, 1000) == 25);
    EXPECT("wait ticks: the longest wait does not overflow", ota_client_wait_ticks(UINT32_MAX, 1000) == (uint32_t)UINT32_MAX);
}

static void test_whole_lifecycle(void) {
    make_device(1, 1);
    EXPECT("settles", run_device(10000) >= 0);
    const char *expected[] = {"offered", "download_started", "downloaded", "flashed", "validated", "reboot", "confirmed"};
    EXPECT("reports every step in order", world.report_count == 7);
    for (int i = 0; i < 7 && i < world.report_count; i++) EXPECT(expected[i], !strcmp(world.reports[i].event, expected[i]));
    EXPECT("downloads each byte once", world.delivered == IMAGE_BYTES);
    check_invariants("lifecycle", "confirmed");
}

static void test_failure(const char *name, int signed_build, void (*fault)(void), const char *event, const char *reason) {
    make_device(signed_build, 1);
    fault();
    EXPECT(name, run_device(20000) >= 0);
    const fake_report_t *terminal = last_terminal();
    EXPECT(name, terminal && !strcmp(terminal->event, event) && !strcmp(terminal->reason, reason));
    check_invariants(name, event);
}

static void tamper(void) { world.tamper_at = 20000; }
static void bad_signature(void) { world.signature_b64[3] = world.signature_b64[3] == 'A' ? 'B' : 'A'; }
static void unsigned_build_required(void) {
    world.signature_b64[0] = '\0';
    device.config.require_signature = true;
}
static void dead_link(void) {
    world.get_failures_left = 1000;
    device.config.max_download_attempts = 4;
}
static void never_healthy(void) { device.health = 0; }
static void refuses(void) { device.health = -1; }
static void crash_loop(void) {
    /* The new image dies before the application can check: every trial boot ends in a restart. */
    device.health = 0;
    device.config.trial_timeout_s = 1000000;
}

static void test_failures(void) {
    test_failure("a tampered byte is checksum_mismatch", 1, tamper, "failed", "checksum_mismatch");
    test_failure("a bad signature is signature_invalid", 1, bad_signature, "failed", "signature_invalid");
    test_failure("an unsigned build is refused when signatures are required", 0, unsigned_build_required, "failed", "signature_invalid");
    EXPECT("and is never downloaded", world.gets == 0);
    test_failure("a dead link is download_failed", 1, dead_link, "failed", "download_failed");
    test_failure("a trial that never passes is confirm_timeout", 1, never_healthy, "rolled_back", "confirm_timeout");
    test_failure("a refused trial is health_check_failed", 1, refuses, "rolled_back", "health_check_failed");
}

static void test_crash_loop(void) {
    make_device(1, 0);
    crash_loop();
    /* Step until the trial runs, then restart the device the way a crashing image would. */
    int booted = 0, crashes = 0;
    for (int steps = 0; steps < 20000 && !(booted && settled(&device.client)); steps++) {
        if (!booted || world.reboot_requested || world.powered_off) {
            if (booted) fake_reboot(&world);
            booted = 1;
            ota_client_init(&device.client, &device.config);
            continue;
        }
        if (ota_client_in_trial(&device.client)) {
            crashes++;
            world.reboot_requested = 1;
            continue;
        }
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
    }
    const fake_report_t *terminal = last_terminal();
    EXPECT("a crash loop ends in the bootloader's rollback", terminal && !strcmp(terminal->event, "rolled_back") && !strcmp(terminal->reason, "boot_failed"));
    EXPECT("the trial booted as often as the bootloader allows", crashes == 1);
    EXPECT("the boot after the bootloader's rollback knows it, for the health count", ota_client_booted_after_rollback(&device.client));
    check_invariants("crash loop", "rolled_back");
}

/* Cuts the link or the power once at every `stride`-th byte of the download; each run must
 * still confirm the offered bytes. Returns the most bytes any run fetched twice. */
static long cut_everywhere(long *cut, long stride, const char *name) {
    long worst = 0;
    int runs = 0;
    for (long at = 0; at <= IMAGE_BYTES; at += stride, runs++) {
        make_device(1, 1);
        *cut = at;
        EXPECT(name, run_device(20000) >= 0);
        check_invariants(name, "confirmed");
        if (world.delivered - IMAGE_BYTES > worst) worst = world.delivered - IMAGE_BYTES;
    }
    printf("  %s at %d byte positions: at most %ld bytes fetched again (chunk %u)\n", name, runs, worst, CHUNK);
    return worst;
}

static void test_cuts_everywhere(void) {
    EXPECT("a link cut fetches no byte again", cut_everywhere(&world.cut_link_at, 997, "link cut") == 0);
    EXPECT("a power cut fetches at most one chunk again", cut_everywhere(&world.cut_power_at, 211, "power cut") <= (long)CHUNK);
}

/* The power goes instead of the k-th write that must survive, for every k of a whole update. */
static void test_power_cut_before_every_write(void) {
    make_device(1, 1);
    EXPECT("a clean run settles", run_device(10000) >= 0);
    long update_writes = world.mutations, trial_cuts = 0;
    for (long k = 0; k < update_writes; k++) {
        /* With two trial boots, a cut during the first one leaves the second to confirm in. */
        make_device(1, 1);
        world.max_trial_boots = 2;
        world.cut_power_at_mutation = k;
        EXPECT("a cut before a write settles", run_device(20000) >= 0);
        check_invariants("power cut before a write", "confirmed");
        /* With one (ESP-IDF's bootloader), a cut during the trial is the bootloader's rollback. */
        make_device(1, 1);
        world.cut_power_at_mutation = k;
        EXPECT("a cut before a write settles", run_device(20000) >= 0);
        const fake_report_t *terminal = last_terminal();
        if (terminal && !strcmp(terminal->event, "rolled_back")) {
            trial_cuts++;
            check_invariants("a cut in the only trial boot", "rolled_back");
            EXPECT("a cut in the only trial boot is boot_failed", !strcmp(terminal->reason, "boot_failed"));
        } else {
            check_invariants("power cut before a write", "confirmed");
        }
    }
    EXPECT("only the writes of the trial boot itself end in the bootloader's rollback", trial_cuts == 2);
    /* The same, with the trial refused: the cuts land in the rollback's writes too. */
    make_device(1, 0);
    run_device(20000);
    long rollback_writes = world.mutations;
    for (long k = 0; k < rollback_writes; k++) {
        make_device(1, 0);
        world.cut_power_at_mutation = k;
        EXPECT("a cut in a rollback settles", run_device(20000) >= 0);
        check_invariants("power cut in a rollback", "rolled_back");
    }
    printf("  power cut before each of the %ld writes of an update and the %ld of a rolled-back one\n", update_writes, rollback_writes);
}

static void test_retry_after(void) {
    make_device(1, 1);
    world.check_failures_left = 1;
    ota_client_init(&device.client, &device.config);
    uint32_t wait = 0;
    ota_client_step(&device.client, &wait);
    EXPECT("a 503 waits its Retry-After", wait == 7000);
    world.now += wait;
    ota_client_step(&device.client, &wait);
    EXPECT("then the check is offered", ota_client_phase(&device.client) == OTA_PHASE_DOWNLOADING);
}

static void test_retry_after_past_32_bits(void) {
    make_device(1, 1);
    world.check_failures_left = 1;
    world.check_retry_after_s = 4294968; /* 4,294,968,000 ms: 704 ms once narrowed to 32 bits */
    ota_client_init(&device.client, &device.config);
    uint32_t wait = 0;
    ota_client_step(&device.client, &wait);
    EXPECT("a Retry-After too long for 32 bits of ms waits the longest Retry-After the client honours", wait == OTA_RETRY_AFTER_MAX_S * 1000u);
}

/* The application confirms once, as the header allows; the flash write behind it fails once. */
static void test_confirm_survives_a_failed_mark_valid(void) {
    make_device(1, 2);
    world.mark_valid_failures_left = 1;
    run_device(10000);
    EXPECT("a confirm whose mark_valid failed once is retried, not lost to the trial timeout", world.mark_valid_failures_left == 0);
    check_invariants("mark_valid failed once", "confirmed");
}

static int link_was_cut(void) {
    return world.cut_link_at < 0 && world.delivered >= 30000;
}

static int failure_reported(void) {
    return count_reports("failed") > 0;
}

/* An 18-second outage mid-download: ten 503s with Retry-After 2. It rides on them, and resumes. */
static void test_outage_mid_download(void) {
    make_device(1, 1);
    world.cut_link_at = 30000;
    ota_client_init(&device.client, &device.config);
    step_until(link_was_cut, 20000);
    EXPECT("the link was cut at 30000 bytes", link_was_cut());
    world.get_unavailable_left = 10;
    world.get_retry_after_s = 2;
    EXPECT("an outage of ten 503s settles", run_device_from(1, 20000) >= 0);
    check_invariants("outage mid-download", "confirmed");
    EXPECT("every 503 was met", world.get_unavailable_left == 0);
    EXPECT("no byte was fetched twice", world.delivered == IMAGE_BYTES);
    EXPECT("no failure was reported", count_reports("failed") == 0);
}

/* An outage past the download budget fails the update, keeping its bytes: the same build offered
 * again resumes where it stopped. */
static void test_outage_past_the_budget_keeps_the_bytes(void) {
    make_device(1, 1);
    device.config.download_budget_s = 60;
    world.cut_link_at = 30000;
    ota_client_init(&device.client, &device.config);
    step_until(link_was_cut, 20000);
    world.get_unavailable_left = 1000000;
    world.get_retry_after_s = 5;
    uint64_t outage_from = world.now;
    step_until(failure_reported, 100000);
    const fake_report_t *terminal = last_terminal();
    EXPECT("an outage past the budget fails the update", terminal && !strcmp(terminal->event, "failed") && !strcmp(terminal->reason, "download_failed"));
    EXPECT("once the budget had passed", world.now - outage_from >= 60000);
    long before = world.delivered;
    world.get_unavailable_left = 0;
    EXPECT("the same build offered again settles", run_device(20000) >= 0);
    EXPECT("and is confirmed", last_terminal() && !strcmp(last_terminal()->event, "confirmed"));
    EXPECT("resumed from its saved offset: only the bytes it lacked were fetched", world.delivered - before <= IMAGE_BYTES - 16384);
}

/* The switch back fails once: the trial must not run on as if it had been rolled back. */
static void test_rollback_retried_when_it_fails(void) {
    make_device(1, -1);
    world.rollback_failures_left = 1;
    EXPECT("a refused trial whose rollback failed once settles", run_device(20000) >= 0);
    EXPECT("the rollback was tried again", world.rollback_failures_left == 0);
    check_invariants("rollback failed once", "rolled_back");
    EXPECT("rolled_back is reported once", count_reports("rolled_back") == 1);
}

static int three_downloads_delivered(void) {
    return world.delivered >= 3 * IMAGE_BYTES;
}

static int no_report_pending(void) {
    return !ota_client_report_pending(&device.client);
}

static int reboot_requested(void) {
    return world.reboot_requested;
}

/* Every failed update is reported, even while the status endpoint is down across several of them. */
static void test_failures_reported_while_reports_fail(void) {
    make_device(1, 1);
    world.tamper_at = 1000; /* every download of the build fails its checksum */
    world.status_failures_left = 1000000;
    ota_client_init(&device.client, &device.config);
    step_until(three_downloads_delivered, 200000);
    long downloads = world.delivered / IMAGE_BYTES;
    world.status_failures_left = 0;
    world.tamper_at = -1;
    world.build = 0; /* nothing offered any more: what is left is to report */
    step_until(no_report_pending, 20000);
    EXPECT("no report waits", !ota_client_report_pending(&device.client));
    EXPECT("each failed update reaches the server: none is overwritten by the next", count_reports("failed") == downloads);
}

static void test_url_expiry(void) {
    make_device(1, 1);
    world.expire_url_at = 25000;
    EXPECT("an expired URL settles", run_device(20000) >= 0);
    EXPECT("the new URL resumed where the old one stopped", world.last_range_start == 25000 && world.delivered == IMAGE_BYTES);
    check_invariants("url expiry", "confirmed");
}

static void test_range_ignored(void) {
    make_device(1, 1);
    world.cut_link_at = 30000;
    world.ignore_ranges = 1;
    EXPECT("a server without ranges settles", run_device(20000) >= 0);
    EXPECT("the whole build came again from byte 0", world.delivered == 30000 + IMAGE_BYTES);
    check_invariants("ranges ignored", "confirmed");
}

/* A resume answered with the whole build (200) starts over at byte 0, on a slot that, like
 * esp_ota_write, only appends from where it was opened: the slot is opened again at 0. */
static void test_restart_reopens_an_appending_slot(void) {
    make_device(1, 1);
    world.slot_appends = 1;
    world.cut_link_at = 30000;
    world.ignore_ranges = 1;
    EXPECT("a resume answered 200 on an appending slot settles", run_device(20000) >= 0);
    check_invariants("restart on an appending slot", "confirmed");
    EXPECT("no write failed", count_reports("failed") == 0);
}

/* Object storage's ETag is its MD5, not the SHA-256: a resume's If-Range must carry what it answered. */
static void test_if_range_carries_the_servers_etag(void) {
    make_device(1, 1);
    world.etag = "\"9e107d9d372bb6826bd81d3542a419d6\"";
    world.cut_link_at = 30000;
    EXPECT("a cut download from object storage settles", run_device(20000) >= 0);
    check_invariants("object storage's ETag", "confirmed");
    EXPECT("it resumed with a range (no byte fetched twice)", world.delivered == IMAGE_BYTES && world.last_range_start == 30000);
}

/* A download answered 200 without Content-Length (chunked): the offer's size says where it ends. */
static void test_no_content_length(void) {
    make_device(1, 1);
    world.omit_content_length = 1;
    EXPECT("a download without Content-Length settles", run_device(20000) >= 0);
    check_invariants("no Content-Length", "confirmed");
    EXPECT("each byte fetched once", world.delivered == IMAGE_BYTES);
}

static void test_report_retried(void) {
    make_device(1, 1);
    int booted = 0, restarted = 0;
    for (int steps = 0; steps < 20000; steps++) {
        if (!booted || world.reboot_requested) {
            if (booted) fake_reboot(&world);
            booted = 1;
            ota_client_init(&device.client, &device.config);
            continue;
        }
        if (ota_client_in_trial(&device.client)) {
            ota_client_confirm(&device.client);
            world.status_failures_left = 5;
        }
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
        if (!restarted && world.status_failures_left == 2) {
            /* The device restarts while `confirmed` waits: the saved record keeps it. */
            restarted = 1;
            EXPECT("confirmed is pending before the restart", ota_client_report_pending(&device.client));
            world.reboot_requested = 1;
        }
        if (settled(&device.client)) break;
    }
    EXPECT("confirmed is sent until accepted, across a restart", restarted && count_reports("confirmed") == 1 && world.status_failures_left == 0);
    check_invariants("report retried", "confirmed");
}

static void test_corrupt_record(void) {
    make_device(1, 1);
    world.record_len = 40;
    memset(world.record, 0x33, 40);
    EXPECT("an unreadable record starts clean", ota_client_init(&device.client, &device.config) == OTA_OK);
    EXPECT("and runs the factory build", ota_client_running_build(&device.client) == 0);
}

static int activating(void) {
    return ota_client_phase(&device.client) == OTA_PHASE_ACTIVATING;
}

/* A power cut between the verification and the boot switch: the image is hashed again from flash,
 * OTA_HASH_STEP_BYTES at most per step (the whole image in one step starved ESP-IDF's watchdog). */
static void test_hashing_again_in_pieces(void) {
    make_device(1, 1);
    EXPECT("pieces: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(activating, 2000);
    EXPECT("pieces: whole and verified", activating());
    fake_reboot(&world);
    EXPECT("pieces: boots again", ota_client_init(&device.client, &device.config) == OTA_OK);
    long most = 0;
    for (int steps = 0; steps < 2000 && activating(); steps++) {
        long before = world.slot_bytes_read;
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
        if (world.slot_bytes_read - before > most) most = world.slot_bytes_read - before;
    }
    EXPECT("pieces: no step hashed more than OTA_HASH_STEP_BYTES", most > 0 && most <= (long)OTA_HASH_STEP_BYTES);
    EXPECT("pieces: settles", run_device_from(1, 20000) >= 0);
    check_invariants("hashing again in pieces", "confirmed");
}

/* ---- the saved record's bytes (src/ota_record.h) ---- */

static uint32_t test_crc32(const uint8_t *data, size_t len) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < len; i++) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; bit++) crc = (crc & 1u) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

static uint32_t le32(const uint8_t *at) {
    return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
}

static int downloading(void) {
    return ota_client_phase(&device.client) == OTA_PHASE_DOWNLOADING && world.delivered >= (long)CHUNK;
}

/* The same 876 bytes on every ABI (this suite also runs built for 32 bits), each field where the
 * layout says. */
static void test_record_layout(void) {
    make_device(1, 1);
    EXPECT("layout: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(downloading, 2000);
    EXPECT("layout: 876 bytes", world.record_len == 876);
    EXPECT("layout: magic and version", memcmp(world.record, "OTA2", 4) == 0 && world.record[4] == 3 && world.record[5] == 0);
    EXPECT("layout: its length", world.record[6] == (876 & 0xff) && world.record[7] == (876 >> 8));
    EXPECT("layout: the phase", world.record[8] == OTA_PHASE_DOWNLOADING && world.record[9] == 1);
    EXPECT("layout: the build, little-endian", world.record[24] == 7 && world.record[25] == 0 && le32(world.record + 40) == IMAGE_BYTES);
    EXPECT("layout: the offset", le32(world.record + 44) >= CHUNK && le32(world.record + 44) % CHUNK == 0);
    EXPECT("layout: the deployment", strcmp((const char *)world.record + 48, FAKE_DEPLOYMENT_ID) == 0);
    EXPECT("layout: the checksum", le32(world.record + 872) == test_crc32(world.record, 872));
}

/* A later layout (version 4) is not guessed at: the record is unreadable, and the device starts clean. */
static void test_record_of_a_later_version(void) {
    make_device(1, 1);
    EXPECT("later version: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(downloading, 2000);
    world.record[4] = 4;
    uint32_t crc = test_crc32(world.record, 872);
    for (int i = 0; i < 4; i++) world.record[872 + i] = (uint8_t)(crc >> (8 * i));
    fake_reboot(&world);
    EXPECT("later version: boots again", ota_client_init(&device.client, &device.config) == OTA_OK);
    EXPECT("later version: starts clean", ota_client_phase(&device.client) == OTA_PHASE_IDLE && ota_client_running_build(&device.client) == 0);
}

/* The record as the release before deltas saved it: version 2, the first 224 bytes of today's, then its CRC-32. */
static void to_version_2(void) {
    world.record[4] = 2;
    world.record[6] = 228;
    world.record[7] = 0;
    uint32_t crc = test_crc32(world.record, 224);
    for (int i = 0; i < 4; i++) world.record[224 + i] = (uint8_t)(crc >> (8 * i));
    world.record_len = 228;
}

static void test_record_of_version_2(void) {
    /* Mid-download: the download goes on from its saved offset. */
    make_device(1, 1);
    EXPECT("version 2: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(downloading, 2000);
    long saved = (long)le32(world.record + 44);
    to_version_2();
    fake_reboot(&world);
    long before = world.delivered;
    EXPECT("version 2: settles", run_device(20000) >= 0);
    check_invariants("version 2 mid-download", "confirmed");
    EXPECT("version 2: resumed from its offset", saved > 0 && world.delivered - before == IMAGE_BYTES - saved);
    /* Idle after an update: the image it confirmed is what runs, and is the base of the next patch. */
    device.config.apply_deltas = true;
    to_version_2();
    fake_reboot(&world);
    world.now += 10000000;
    EXPECT("version 2 idle: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    uint32_t wait;
    ota_client_step(&device.client, &wait);
    uint8_t digest[32];
    char hex[65];
    crypto_hash_sha256(digest, image, sizeof image);
    sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
    EXPECT("version 2 idle: the check reports the image it confirmed", !strcmp(world.last_current_hash, hex));
}

/* The previous release's record: its raw struct, as a device of that release saved it. */
typedef struct {
    uint32_t magic;
    uint32_t version;
    uint8_t phase, target_slot, has_signature, pending_event, pending_reason, reserved[3];
    int64_t running_build, build_number, pending_build;
    uint32_t image_size, offset;
    char deployment_id[40], pending_deployment_id[40];
    uint8_t sha256[32], signature[64];
    uint32_t crc32;
} previous_record_t;

/* A device whose previous firmware (with the previous record) installed this one: the new image
 * boots as a trial, reads the record it was left, and confirms the deployment it came from. */
static void test_record_of_the_previous_release(void) {
    make_device(0, 1);
    previous_record_t old;
    memset(&old, 0, sizeof old);
    old.magic = 0x4f544131u;
    old.version = 1;
    old.phase = OTA_PHASE_REBOOTING;
    old.target_slot = 1;
    old.build_number = 7;
    old.image_size = IMAGE_BYTES;
    old.offset = IMAGE_BYTES;
    snprintf(old.deployment_id, sizeof old.deployment_id, "%s", FAKE_DEPLOYMENT_ID);
    crypto_hash_sha256(old.sha256, image, sizeof image);
    old.crc32 = test_crc32((const uint8_t *)&old, offsetof(previous_record_t, crc32));
    memcpy(world.record, &old, sizeof old);
    world.record_len = sizeof old;
    memcpy(world.slot_durable[1], image, sizeof image);
    memcpy(world.slot_live[1], image, sizeof image);
    world.active = 1;
    world.previous = 0;
    world.trial = 1;
    world.attempts = 1;
    world.build = 0; /* nothing more is offered */
    EXPECT("previous record: settles", run_device(2000) >= 0);
    const fake_report_t *terminal = last_terminal();
    EXPECT("previous record: confirms the deployment it came from",
           terminal && !strcmp(terminal->event, "confirmed") && terminal->build == 7 && !strcmp(terminal->deployment, FAKE_DEPLOYMENT_ID));
    EXPECT("previous record: runs build 7, saved in the new layout", ota_client_running_build(&device.client) == 7 && world.record_len == 876);
}

/* Build numbers past 32 bits travel whole in the check and in `confirmed`: the core formats them
 * itself, as newlib-nano's printf cannot. */
static void test_large_build_numbers(void) {
    make_device(1, 1);
    device.config.factory_build_number = 4294967301LL; /* 2^32 + 5 */
    world.build = 4294967303LL;
    EXPECT("a device past 2^32 settles", run_device(10000) >= 0);
    const fake_report_t *terminal = last_terminal();
    EXPECT("and confirms build 2^32 + 7", terminal && !strcmp(terminal->event, "confirmed") && terminal->build == 4294967303LL);
    EXPECT("and runs it", ota_client_running_build(&device.client) == 4294967303LL);
    make_device(1, 1);
    device.config.factory_build_number = 4294967303LL;
    world.build = 4294967303LL;
    ota_client_init(&device.client, &device.config);
    uint32_t wait = 0;
    ota_client_step(&device.client, &wait);
    EXPECT("the check reports 2^32 + 7 as its current build", !strcmp(ota_client_last_check_status(&device.client), "up_to_date"));
}

static void test_chunk_ends(void) {
    EXPECT("a chunk ends at the next multiple", ota_chunk_end(0, CHUNK, 100000) == CHUNK && ota_chunk_end(CHUNK, CHUNK, 100000) == 2 * CHUNK);
    EXPECT("the last chunk ends at the image's end", ota_chunk_end(98304, CHUNK, 100000) == 100000);
    /* The largest image an offer may have (UINT32_MAX - 4096), within one chunk of its end. */
    uint32_t size = UINT32_MAX - 4096u;
    EXPECT("within one chunk of 4 GiB the end is the image's, not a multiple wrapped to 0", ota_chunk_end(size - 100u, CHUNK, size) == size);
}

/* The record is unreadable when the new image first boots as a trial (NVS erased by an ESP-IDF
 * upgrade, a layout the image does not know): the health check decides, never the lost record. */
static void trial_with_an_unreadable_record(int health, int erased, const char *name) {
    make_device(1, health);
    ota_client_init(&device.client, &device.config);
    step_until(reboot_requested, 20000);
    EXPECT(name, world.reboot_requested && world.trial);
    unsigned updated = world.active;
    memset(world.record, 0x5a, sizeof world.record);
    if (erased) world.record_len = 0;
    fake_reboot(&world);
    /* The new image's firmware names its own build, as the header asks. */
    device.config.factory_build_number = 7;
    EXPECT(name, ota_client_init(&device.client, &device.config) == OTA_OK);
    EXPECT(name, ota_client_in_trial(&device.client));
    int confirmed_reports = count_reports("confirmed");
    run_device_from(1, 20000);
    if (health > 0) {
        EXPECT(name, world.active == updated && world.trial == 0);
        EXPECT(name, memcmp(world.slot_durable[world.active], image, sizeof image) == 0);
    } else {
        EXPECT(name, world.trial == 0 && memcmp(world.slot_durable[world.active], "factory image", 13) == 0);
    }
    /* Nothing is reported for a deployment the device no longer knows. */
    EXPECT(name, count_reports("confirmed") == confirmed_reports);
}

static void test_unreadable_record_in_a_trial(void) {
    trial_with_an_unreadable_record(1, 0, "a healthy image whose record was lost is kept, not rolled back");
    trial_with_an_unreadable_record(-1, 0, "an image whose record was lost and that fails its health check is rolled back");
    trial_with_an_unreadable_record(0, 0, "an image whose record was lost and that never confirms is rolled back at the trial timeout");
    trial_with_an_unreadable_record(1, 1, "a healthy image whose record was erased is kept, not rolled back");
    trial_with_an_unreadable_record(0, 1, "an image whose record was erased and that never confirms is rolled back at the trial timeout");
}

static void test_config(void) {
    make_device(1, 1);
    ota_config_t config = device.config;
    config.chunk_bytes = 1000;
    EXPECT("a chunk that is not whole sectors is refused", ota_client_init(&device.client, &config) == OTA_ERR_INVALID_ARG);
    config = device.config;
    config.signing_key_count = 0;
    config.require_signature = true;
    EXPECT("required signatures need a key", ota_client_init(&device.client, &config) == OTA_ERR_INVALID_ARG);
    config = device.config;
    config.token = "";
    EXPECT("a token is required", ota_client_init(&device.client, &config) == OTA_ERR_INVALID_ARG);
    config = device.config;
    config.stop_check_bytes = CHUNK + 4096;
    EXPECT("asks between whole chunks only", ota_client_init(&device.client, &config) == OTA_ERR_INVALID_ARG);
}

/* ---- stopping mid-update (docs/api.md, "Stopping devices mid-update") ---- */

static int stop_reported(void) {
    return count_reports("stopped") > 0;
}

static int activated_anything(void) {
    return world.active != 0 || world.trial != 0 || count_reports("validated") > 0;
}

/* A pause reaches the device within stop_check_bytes: it holds its bytes, reports the stop (no
 * failure), switches nothing, and once resumed continues from its offset. */
static void test_pause_holds_and_resumes(void) {
    make_device(1, 1);
    device.config.stop_check_bytes = CHUNK;
    world.stop_after = 5000;
    world.stop_status = "deployment_paused";
    world.stop_hold = 1;
    EXPECT("pause: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(stop_reported, 20000);
    EXPECT("pause: the stop was reported", count_reports("stopped") == 1 && !strcmp(world.reports[world.report_count - 1].reason, "deployment_paused"));
    EXPECT("pause: within one ask of the stop", world.delivered <= 5000 + (long)CHUNK);
    EXPECT("pause: held, not abandoned", ota_client_phase(&device.client) == OTA_PHASE_DOWNLOADING);
    EXPECT("pause: says why", !strcmp(ota_client_last_stop_status(&device.client), "deployment_paused"));
    long held = world.delivered;
    for (int i = 0; i < 50; i++) {
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
    }
    EXPECT("pause: nothing fetched while paused", world.delivered == held);
    EXPECT("pause: nothing switched, nothing failed", !activated_anything() && count_reports("failed") == 0);
    world.stop_after = -1; /* resumed */
    EXPECT("pause: settles once resumed", run_device_from(1, 20000) >= 0);
    check_invariants("pause and resume", "confirmed");
    EXPECT("pause: resumed from its offset (no byte fetched twice)", world.delivered == IMAGE_BYTES && world.last_range_start == held);
}

/* Time spent held by a pause is no download time: resumed after two hours onto a dead link, the
 * download fails only once the budget has passed from the resume, not at once. */
/* A device paused 5000 bytes into its download, holding them. */
static void pause_a_download(const char *name, uint32_t download_budget_s) {
    make_device(1, 1);
    device.config.stop_check_bytes = CHUNK;
    device.config.download_budget_s = download_budget_s;
    world.stop_after = 5000;
    world.stop_status = "deployment_paused";
    world.stop_hold = 1;
    ota_client_init(&device.client, &device.config);
    step_until(stop_reported, 20000);
    EXPECT(name, ota_client_phase(&device.client) == OTA_PHASE_DOWNLOADING);
}

static void test_pause_does_not_spend_the_budget(void) {
    pause_a_download("paused budget: held", 3600);
    world.now += 2u * 3600u * 1000u; /* two hours paused */
    world.stop_after = -1;          /* resumed, onto a link that carries nothing */
    world.get_failures_left = 1000000;
    uint64_t resumed_at = world.now;
    step_until(failure_reported, 100000);
    const fake_report_t *terminal = last_terminal();
    EXPECT("paused budget: the dead link fails the update", terminal && !strcmp(terminal->reason, "download_failed"));
    EXPECT("paused budget: only once the budget passed from the resume", world.now - resumed_at >= 3600u * 1000u);
}

/* A download held by a pause whose deployment is then cancelled is abandoned: the device hears of
 * it from its next check, reports the stop and goes idle, instead of holding for ever. */
static void test_cancel_while_paused_abandons(void) {
    pause_a_download("cancel while paused: held", 0);
    world.stop_status = "deployment_cancelled";
    world.stop_hold = 0;
    for (int i = 0; i < 200 && ota_client_phase(&device.client) != OTA_PHASE_IDLE; i++) {
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
    }
    EXPECT("cancel while paused: abandoned", ota_client_phase(&device.client) == OTA_PHASE_IDLE);
    EXPECT("cancel while paused: the cancel reported", count_reports("stopped") == 2 && !strcmp(world.reports[world.report_count - 1].reason, "deployment_cancelled"));
    EXPECT("cancel while paused: no failure", count_reports("failed") == 0);
}

/* A cancel abandons the download: no switch, no failure, the stop reported once. */
static void test_cancel_abandons(void) {
    make_device(1, 1);
    device.config.stop_check_bytes = CHUNK;
    world.stop_after = 20000;
    world.stop_status = "deployment_cancelled";
    EXPECT("cancel: settles", run_device(20000) >= 0);
    EXPECT("cancel: abandoned within one ask of the stop", world.delivered <= 20000 + (long)CHUNK && world.delivered < IMAGE_BYTES);
    EXPECT("cancel: nothing switched", !activated_anything() && ota_client_running_build(&device.client) == 0);
    EXPECT("cancel: no failure, the stop reported once", count_reports("failed") == 0 && count_reports("stopped") == 1);
    EXPECT("cancel: says why", !strcmp(ota_client_last_stop_status(&device.client), "deployment_cancelled"));
    EXPECT("cancel: idle", ota_client_phase(&device.client) == OTA_PHASE_IDLE && !ota_client_report_pending(&device.client));
}

/* With no ask due during the download (a build smaller than stop_check_bytes), the ask before the
 * switch still stops it: a stop that came after the last byte switches nothing. */
static void test_stop_after_the_last_byte(void) {
    make_device(1, 1);
    world.stop_after = IMAGE_BYTES;
    world.stop_status = "build_archived";
    EXPECT("archived after the last byte: settles", run_device(20000) >= 0);
    EXPECT("archived after the last byte: asked once, before the switch", world.asks == 1 && world.delivered == IMAGE_BYTES);
    EXPECT("archived after the last byte: nothing switched", !activated_anything() && ota_client_running_build(&device.client) == 0);
    EXPECT("archived after the last byte: stopped, not failed", count_reports("stopped") == 1 && count_reports("failed") == 0);

    /* Paused there, it holds the whole image and installs once resumed, fetching nothing again. */
    make_device(1, 1);
    world.stop_after = IMAGE_BYTES;
    world.stop_status = "deployment_paused";
    world.stop_hold = 1;
    EXPECT("paused after the last byte: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(stop_reported, 20000);
    EXPECT("paused after the last byte: waits to switch", ota_client_phase(&device.client) == OTA_PHASE_ACTIVATING && !activated_anything());
    world.stop_after = -1;
    EXPECT("paused after the last byte: settles once resumed", run_device_from(1, 20000) >= 0);
    check_invariants("paused after the last byte", "confirmed");
    EXPECT("paused after the last byte: nothing fetched again", world.delivered == IMAGE_BYTES);
}

static int activated(void) {
    return world.trial != 0 || world.reboot_requested;
}

/* The switch waits for an answer: three 503s to the ask delay it, and the fourth answer lets it go. */
static void test_switch_waits_for_an_answer(void) {
    make_device(1, 1);
    world.offer_failures_left = 3;
    EXPECT("unanswered ask: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(activated, 20000);
    EXPECT("unanswered ask: switched only after an answer", world.offer_failures_left == 0 && world.asks == 1);
    EXPECT("unanswered ask: settles", run_device_from(1, 20000) >= 0);
    check_invariants("unanswered ask", "confirmed");

    /* A refused token holds the update: a device the service no longer takes does not install. */
    make_device(1, 1);
    world.offer_refused = 1;
    EXPECT("refused token: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    for (int i = 0; i < 200; i++) {
        uint32_t wait = 0;
        ota_client_step(&device.client, &wait);
        world.now += wait + 1;
    }
    EXPECT("refused token: nothing switched", !activated_anything() && world.delivered == IMAGE_BYTES);
    EXPECT("refused token: says why", !strcmp(ota_client_last_stop_status(&device.client), "token_refused"));

    /* A server from before the question (404) lets the update go on, as before. */
    make_device(1, 1);
    world.offer_route_missing = 1;
    EXPECT("older server: settles", run_device(20000) >= 0);
    check_invariants("older server", "confirmed");
}

/* A download URL refused because its offer no longer stands (a resume after a cut, with no ask
 * due): the device asks why and stops, it does not fail. */
static void test_refused_download_asks_why(void) {
    make_device(1, 1);
    world.cut_link_at = 20000;
    world.stop_after = 20000;
    world.stop_status = "deployment_cancelled";
    world.refuse_stopped_downloads = 1;
    EXPECT("410: settles", run_device(20000) >= 0);
    EXPECT("410: stopped, not failed", count_reports("stopped") == 1 && count_reports("failed") == 0);
    EXPECT("410: nothing switched", !activated_anything() && ota_client_running_build(&device.client) == 0);

    make_device(1, 1);
    world.cut_link_at = 20000;
    world.stop_after = 20000;
    world.stop_status = "deployment_paused";
    world.stop_hold = 1;
    world.refuse_stopped_downloads = 1;
    EXPECT("409: boots", ota_client_init(&device.client, &device.config) == OTA_OK);
    step_until(stop_reported, 20000);
    EXPECT("409: held", ota_client_phase(&device.client) == OTA_PHASE_DOWNLOADING && count_reports("failed") == 0);
    world.stop_after = -1;
    EXPECT("409: settles once resumed", run_device_from(1, 20000) >= 0);
    check_invariants("409 then resumed", "confirmed");
    EXPECT("409: no byte fetched twice", world.delivered == IMAGE_BYTES);
}

/* ---- delta patches ---- */

static uint8_t base_image[IMAGE_BYTES];
static uint8_t patch_bytes[IMAGE_BYTES];
static uint8_t base_sha256[32];

/* A device that runs base_image (the previous build: `image` with a few hundred bytes changed)
 * and applies patches, offered the patch from it to `image`. */
static void make_delta_device(int signed_build, int health) {
    make_device(signed_build, health);
    memcpy(base_image, image, sizeof base_image);
    for (size_t i = 13; i < sizeof base_image; i += 157) base_image[i] ^= (uint8_t)(i | 1u);
    memcpy(base_image, "factory image", 13);
    memcpy(world.slot_live[0], base_image, sizeof base_image);
    memcpy(world.slot_durable[0], base_image, sizeof base_image);
    crypto_hash_sha256(base_sha256, base_image, sizeof base_image);
    world.patch_size = make_patch(base_image, sizeof base_image, image, sizeof image, patch_bytes, sizeof patch_bytes);
    world.patch = patch_bytes;
    memcpy(world.patch_base_sha256, base_sha256, sizeof base_sha256);
    device.config.apply_deltas = true;
    device.config.factory_image_sha256 = base_sha256;
}

static const fake_report_t *report_of(const char *event) {
    for (int i = 0; i < world.report_count; i++) {
        if (!strcmp(world.reports[i].event, event)) return &world.reports[i];
    }
    return NULL;
}

static void test_delta_update(void) {
    make_delta_device(1, 1);
    EXPECT("delta: the patch is small", world.patch_size > 0 && world.patch_size < IMAGE_BYTES / 4);
    EXPECT("delta: settles", run_device(20000) >= 0);
    check_invariants("delta update", "confirmed");
    EXPECT("delta: only the patch was downloaded", world.delivered == (long)world.patch_size && world.patch_gets == 1);
    const fake_report_t *downloaded = report_of("downloaded");
    char expected[80];
    snprintf(expected, sizeof expected, "{\"delta\":\"applied\",\"patch_bytes\":%zu}", world.patch_size);
    EXPECT("delta: `downloaded` says the patch was applied", downloaded && !strcmp(downloaded->detail, expected));
    EXPECT("delta: the base was read from the running slot", world.running_bytes_read >= IMAGE_BYTES / 2);
    /* The next check reports the new image as the base of the next patch. */
    uint8_t digest[32];
    char hex[65];
    crypto_hash_sha256(digest, image, sizeof image);
    sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
    world.now += 10000000;
    uint32_t wait;
    ota_client_step(&device.client, &wait);
    EXPECT("delta: the next check reports the confirmed image", world.last_check_delta_formats && !strcmp(world.last_current_hash, hex));

    /* A client that does not apply patches, or whose port cannot read the running slot, says nothing of them and gets the image. */
    for (int without_port = 0; without_port < 2; without_port++) {
        make_delta_device(1, 1);
        if (without_port) world.ports.slot.read_running = NULL;
        else device.config.apply_deltas = false;
        EXPECT("no deltas: settles", run_device(20000) >= 0);
        check_invariants("no deltas", "confirmed");
        EXPECT("no deltas: the check said nothing of them", !world.last_check_delta_formats && world.last_current_hash[0] == '\0');
        EXPECT("no deltas: the image was downloaded", world.delivered == IMAGE_BYTES && world.patch_gets == 0);
    }
}

/* Cuts the link or the power once at every `stride`-th byte of the patch, on flash that (as
 * esp_ota_write's) erases a sector only when writing reaches its start: each run confirms the
 * offered bytes from the patch alone; returns the most patch bytes any run fetched again. */
static long delta_cut_everywhere(long *cut, long stride, const char *name) {
    long worst = 0;
    int runs = 0;
    make_delta_device(1, 1);
    long patch_size = (long)world.patch_size;
    for (long at = 0; at <= patch_size; at += stride, runs++) {
        make_delta_device(1, 1);
        world.slot_appends = 1;
        *cut = at;
        EXPECT(name, run_device(20000) >= 0);
        check_invariants(name, "confirmed");
        EXPECT(name, world.patch_gets >= 1 && world.delivered >= patch_size && world.delivered < IMAGE_BYTES);
        EXPECT(name, world.resumes_inside_a_sector == 0);
        if (world.delivered - patch_size > worst) worst = world.delivered - patch_size;
    }
    printf("  delta %s at %d byte positions of a %ld-byte patch: at most %ld bytes fetched again\n", name, runs, patch_size, worst);
    return worst;
}

static void test_delta_cuts(void) {
    EXPECT("delta: a link cut fetches no byte again", delta_cut_everywhere(&world.cut_link_at, 97, "link cut") == 0);
    EXPECT("delta: a power cut fetches at most one chunk again", delta_cut_everywhere(&world.cut_power_at, 41, "power cut") <= (long)CHUNK);
    /* The power goes instead of each write that must survive. */
    make_delta_device(1, 1);
    EXPECT("delta: a clean run settles", run_device(20000) >= 0);
    long writes = world.mutations;
    for (long k = 0; k < writes; k++) {
        make_delta_device(1, 1);
        world.slot_appends = 1;
        world.max_trial_boots = 2;
        world.cut_power_at_mutation = k;
        EXPECT("delta: a cut before a write settles", run_device(20000) >= 0);
        check_invariants("delta: power cut before a write", "confirmed");
        EXPECT("delta: no failure", count_reports("failed") == 0);
    }
    printf("  delta: power cut before each of the %ld writes of a patched update\n", writes);
}

/* A patch that cannot give the build falls back to the image: no failure is reported, and
 * `downloaded` says why. */
static void test_delta_falls_back(void) {
    struct {
        const char *name, *failure;
        void (*fault)(void);
    } cases[] = {
        {"a tampered patch", NULL, NULL}, /* where the flipped bits land decides which */
        {"a patch from another base", "checksum_mismatch", NULL},
        {"a patch that is gone", "patch_unavailable", NULL},
        {"a patch cut short", "patch_incomplete", NULL},
        {"a patch of another image size", "size_mismatch", NULL},
        {"a patch the applier refuses", "patch_refused", NULL},
    };
    static uint8_t other[IMAGE_BYTES];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_delta_device(1, 1);
        switch (i) {
        case 0: patch_bytes[world.patch_size / 2] ^= 0x5a; break; /* as stored: every download of it has the flipped bits */
        case 1:
            /* The service believes the device runs base_image; it runs another image. */
            memcpy(other, base_image, sizeof other);
            other[5000] ^= 0x11;
            world.patch_size = make_patch(other, sizeof other, image, sizeof image, patch_bytes, sizeof patch_bytes);
            break;
        case 2: world.patch_gone = 1; break;
        case 3: world.patch_size -= 20; break;
        case 4: world.patch_size = make_patch(base_image, sizeof base_image, image, sizeof image - 1, patch_bytes, sizeof patch_bytes); break;
        case 5: patch_bytes[0] = 0x14; break; /* another patch type */
        }
        EXPECT(cases[i].name, run_device(20000) >= 0);
        check_invariants(cases[i].name, "confirmed");
        EXPECT(cases[i].name, count_reports("failed") == 0);
        const fake_report_t *downloaded = report_of("downloaded");
        const char *failures[] = {cases[i].failure ? cases[i].failure : "checksum_mismatch", "patch_refused", "patch_incomplete"};
        int matched = 0;
        for (size_t k = 0; k < (cases[i].failure ? 1u : 3u); k++) {
            char expected[96];
            snprintf(expected, sizeof expected, "{\"delta\":\"fell_back\",\"delta_failure\":\"%s\"}", failures[k]);
            matched |= downloaded && !strcmp(downloaded->detail, expected);
        }
        EXPECT(cases[i].name, matched);
        EXPECT(cases[i].name, world.delivered >= IMAGE_BYTES && world.patch_gets >= 1);
    }
    /* A later offer of the build without the patch (its URL expired; the service no longer has it):
     * the image, from byte 0. */
    make_delta_device(1, 1);
    world.patch_offers_left = 1;
    world.expire_url_at = (long)world.patch_size / 2;
    EXPECT("a withdrawn patch settles", run_device(20000) >= 0);
    check_invariants("a withdrawn patch", "confirmed");
    const fake_report_t *downloaded = report_of("downloaded");
    EXPECT("a withdrawn patch", downloaded && strstr(downloaded->detail, "patch_withdrawn") && count_reports("failed") == 0);
}

void json_scan_tests(void);
void crypto_tests(void);
void coredump_tests(void);

/* The check reports the offset the firmware keeps, as it is at each check, and leaves out none or one no clock has. */
static void test_utc_offset(void) {
    make_device(1, 1);
    world.build = 0;
    int16_t offset = 330;
    device.config.utc_offset_minutes = &offset;
    uint32_t wait;
    EXPECT("offset: init", ota_client_init(&device.client, &device.config) == OTA_OK);
    ota_client_step(&device.client, &wait);
    EXPECT("offset: the check reports it", world.last_utc_offset == 330);
    offset = -240;
    world.now += wait + 1;
    ota_client_step(&device.client, &wait);
    EXPECT("offset: the next check reports its new value", world.last_utc_offset == -240);
    offset = 900;
    world.now += wait + 1;
    ota_client_step(&device.client, &wait);
    EXPECT("offset: one no clock has is left out", world.last_utc_offset == LLONG_MIN);
    device.config.utc_offset_minutes = NULL;
    EXPECT("offset: init without", ota_client_init(&device.client, &device.config) == OTA_OK);
    world.now += wait + 1;
    ota_client_step(&device.client, &wait);
    EXPECT("offset: none is left out", world.last_utc_offset == LLONG_MIN);
}

/* The check reports what the bootloader checks: the chip revision and the eFuse secure version, as they are at each check. */
static void test_boot_facts(void) {
    make_device(1, 1);
    world.build = 0;
    uint16_t chip_revision = 4;
    uint32_t secure_version = 4000000000u;
    device.config.chip_revision = &chip_revision;
    device.config.secure_version = &secure_version;
    uint32_t wait;
    EXPECT("boot facts: init", ota_client_init(&device.client, &device.config) == OTA_OK);
    ota_client_step(&device.client, &wait);
    EXPECT("boot facts: the check reports the chip revision", world.last_chip_revision == 4);
    EXPECT("boot facts: and the secure version, all 32 bits of it", world.last_secure_version == 4000000000LL);
    secure_version = 3;
    world.now += wait + 1;
    ota_client_step(&device.client, &wait);
    EXPECT("boot facts: the next check reports the eFuse as it is then", world.last_secure_version == 3);
    device.config.chip_revision = NULL;
    device.config.secure_version = NULL;
    EXPECT("boot facts: init without", ota_client_init(&device.client, &device.config) == OTA_OK);
    world.now += wait + 1;
    ota_client_step(&device.client, &wait);
    EXPECT("boot facts: none is left out", world.last_chip_revision == LLONG_MIN && world.last_secure_version == LLONG_MIN);
}

/* How the device runs since its install: counted across boots, restarted by an install, sent with each check. */
static void test_health(void) {
    ota_health_keeper_t keeper;
    ota_health_boot(&keeper, NULL, 7, "power_on", false);
    EXPECT("health: a first boot counts one", keeper.counts.build == 7 && keeper.counts.boots == 1 && keeper.counts.abnormal_boots == 0);
    EXPECT("health: an update reports its time", !ota_health_update(&keeper, 7, 3600, 120000) && keeper.health.uptime_seconds == 3600);
    ota_health_counts_t saved = keeper.counts;
    ota_health_boot(&keeper, &saved, 7, "task_watchdog", false);
    EXPECT("health: a watchdog reset counts as abnormal", keeper.counts.boots == 2 && keeper.counts.abnormal_boots == 1);
    ota_health_update(&keeper, 7, 600, -1);
    EXPECT("health: uptime sums the boots", keeper.health.uptime_seconds == 4200 && keeper.health.min_free_heap == -1);
    EXPECT("health: an install in this boot starts afresh", ota_health_update(&keeper, 8, 900, 100000));
    ota_health_update(&keeper, 8, 1000, 100000);
    EXPECT("health: from the install", keeper.counts.build == 8 && keeper.health.boots == 1 && keeper.health.abnormal_boots == 0 && keeper.health.uptime_seconds == 100);
    saved = keeper.counts;
    ota_health_boot(&keeper, &saved, 8, "panic", false);
    EXPECT("health: a panic on the new build counts against it", keeper.health.boots == 2 && keeper.health.abnormal_boots == 1 && keeper.health.uptime_seconds == 100);
    ota_health_boot(&keeper, &saved, 9, "software", false);
    EXPECT("health: counts of another build start afresh", keeper.counts.build == 9 && keeper.counts.boots == 1 && keeper.counts.abnormal_boots == 0);
    /* The panic that ended a trial the bootloader then abandoned is the trial build's (its
     * rolled_back report says so), not the build the device went back to. */
    saved = keeper.counts;
    ota_health_boot(&keeper, &saved, 9, "panic", true);
    EXPECT("health: an abandoned trial's reset is a boot, not an abnormal one, of the build gone back to", keeper.counts.boots == 2 && keeper.counts.abnormal_boots == 0);
    EXPECT("health: and the check still says why it reset", !strcmp(keeper.health.reset_reason, "panic"));
    saved.build = 10; /* counts the trial build saved before it crashed */
    ota_health_boot(&keeper, &saved, 9, "task_watchdog", true);
    EXPECT("health: whichever build's counts were saved", keeper.counts.build == 9 && keeper.counts.boots == 1 && keeper.counts.abnormal_boots == 0);
    EXPECT("health: brownout, not a power-on", ota_reset_reason_abnormal("brownout") && !ota_reset_reason_abnormal("power_on") && !ota_reset_reason_abnormal(NULL));

    make_device(1, 1);
    world.build = 0;
    ota_health_boot(&keeper, NULL, 0, "panic", false);
    ota_health_update(&keeper, 0, 7200, 150000);
    device.config.health = &keeper.health;
    uint32_t wait;
    EXPECT("health: init", ota_client_init(&device.client, &device.config) == OTA_OK);
    ota_client_step(&device.client, &wait);
    EXPECT("health: the check reports it",
           strcmp(world.last_health, "{\"reset_reason\":\"panic\",\"boots\":1,\"abnormal_boots\":1,\"uptime_seconds\":7200,\"min_free_heap\":150000}") == 0);
    keeper.health.min_free_heap = -1;
    world.now += wait + 1;
    ota_client_step(&device.client, &wait);
    EXPECT("health: an unknown heap is left out", strcmp(world.last_health, "{\"reset_reason\":\"panic\",\"boots\":1,\"abnormal_boots\":1,\"uptime_seconds\":7200}") == 0);
    keeper.health.boots = 0;
    world.now += wait + 1;
    ota_client_step(&device.client, &wait);
    EXPECT("health: no boot counted, nothing sent", world.last_health[0] == '\0');
    device.config.health = NULL;
}

int main(void) {
    if (sodium_init() < 0) return 1;
    randombytes_buf_deterministic(image, sizeof image, (const unsigned char *)"ota core unit test image seed!!!");
    crypto_sign_keypair(public_key, secret_key);
    json_scan_tests();
    crypto_tests();
    coredump_tests();
    test_wait_ticks();
    test_whole_lifecycle();
    test_failures();
    test_crash_loop();
    test_retry_after();
    test_retry_after_past_32_bits();
    test_confirm_survives_a_failed_mark_valid();
    test_failures_reported_while_reports_fail();
    test_rollback_retried_when_it_fails();
    test_outage_mid_download();
    test_outage_past_the_budget_keeps_the_bytes();
    test_url_expiry();
    test_range_ignored();
    test_no_content_length();
    test_if_range_carries_the_servers_etag();
    test_restart_reopens_an_appending_slot();
    test_report_retried();
    test_corrupt_record();
    test_hashing_again_in_pieces();
    test_record_layout();
    test_record_of_a_later_version();
    test_record_of_the_previous_release();
    test_record_of_version_2();
    test_large_build_numbers();
    test_unreadable_record_in_a_trial();
    test_chunk_ends();
    test_config();
    test_pause_holds_and_resumes();
    test_pause_does_not_spend_the_budget();
    test_cancel_while_paused_abandons();
    test_cancel_abandons();
    test_stop_after_the_last_byte();
    test_switch_waits_for_an_answer();
    test_refused_download_asks_why();
    test_cuts_everywhere();
    test_power_cut_before_every_write();
    test_delta_update();
    test_delta_cuts();
    test_delta_falls_back();
    test_utc_offset();
    test_boot_facts();
    test_health();
    return test_summary();
}
