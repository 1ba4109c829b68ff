/*
 * ota-device: a command-line device on the linux port. It keeps two slots, a boot pointer and its
 * saved state in a directory, checks the server, updates itself, "reboots" by re-executing, and
 * confirms the new image once the demo application's health check passes.
 *
 * The demo application is the running slot's bytes; its health check fails when they contain
 * OTA-HEALTH-FAIL (it never passes, so the trial times out) or OTA-HEALTH-REJECT (it refuses the
 * trial at once). Run `ota-device --help` for the flags.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ota_linux.h"

static void usage(FILE *out) {
    fputs(
        "usage: ota-device --dir DIR --server URL [options]\n"
        "\n"
        "A device on the linux port of the OTA client. DIR holds its two slots, boot pointer and state.\n"
        "The token comes from --token or the OTA_TOKEN environment variable; it is never printed.\n"
        "\n"
        "  --dir DIR                the device directory (required)\n"
        "  --server URL             the service's base URL, e.g. http://127.0.0.1:8080 (required)\n"
        "  --token TOKEN            a device-scope project token or a per-device token\n"
        "  --device-id ID           the unit's id (required with a project token)\n"
        "  --framework NAME         esp_idf or arduino (default esp_idf)\n"
        "  --chip NAME              chip family (default esp32)\n"
        "  --board ID, --hardware-revision R, --partition-profile P, --security-mode M,\n"
        "  --version-label L, --nvs-schema-version N   reported in every check when given\n"
        "  --utc-offset MINUTES     the local time's offset from UTC reported in every check (-720..840)\n"
        "  --chip-revision N        the chip revision reported in every check, major * 100 + minor (0..65535)\n"
        "  --secure-version N       the eFuse anti-rollback version reported in every check (0..4294967295)\n"
        "  --coredump FILE          at start, send the ESP-IDF core dump in FILE to the service, then\n"
        "                           delete it once the service has it whole (or refused it for good)\n"
        "  --health                 report how the device has run since its install (boots, abnormal\n"
        "                           resets, uptime) in every check, counted in DIR/health\n"
        "  --reset-reason R         why this start is a reset, as ESP-IDF names it (default power_on;\n"
        "                           panic, task_watchdog, brownout, ... count as abnormal)\n"
        "  --key KEY                a pinned Ed25519 public key, 32 bytes as hex or base64 (up to 2)\n"
        "  --require-signature      refuse unsigned builds (signature_invalid)\n"
        "  --factory FILE           install FILE in slot 0 when DIR has no device yet\n"
        "  --factory-build N        the build_number of the factory image (default 0)\n"
        "  --chunk BYTES            bytes between two saves of the download offset (default 16384)\n"
        "  --poll SECONDS           check interval when the server suggests none (default 1800)\n"
        "  --retry-base MS          first retry delay, doubled per failure (default 2000)\n"
        "  --retry-max MS           longest retry delay (default 300000)\n"
        "  --max-attempts N         download attempts in a row without a byte before failing (default 10)\n"
        "  --download-budget S      and seconds without a byte before failing (default 3600)\n"
        "  --stop-check BYTES       bytes between two asks whether the offer still stands (default 262144)\n"
        "  --trial-timeout SECONDS  time a trial has to pass its health check in one boot (default 300)\n"
        "  --max-trial-boots N      boots a trial gets before the bootloader goes back (default 1)\n"
        "  --stall-timeout SECONDS  no byte for this long breaks a download (default 30)\n"
        "  --deltas                 take delta patches from the running image (falls back to the image)\n"
        "  --once                   exit once the device is idle: an update ended and was reported,\n"
        "                           or a check offered nothing; prints one JSON line of the outcome\n"
        "  --help                   this text\n",
        out);
}

static int parse_key(const char *text, uint8_t key[32]) {
    size_t len = strlen(text), out_len = 0;
    if (len == 64 && sodium_hex2bin(key, 32, text, len, NULL, &out_len, NULL) == 0 && out_len == 32) return 0;
    if (sodium_base642bin(key, 32, text, len, NULL, &out_len, NULL, sodium_base64_VARIANT_ORIGINAL) == 0 && out_len == 32) return 0;
    return -1;
}

static int contains(const unsigned char *data, size_t len, const char *marker) {
    size_t marker_len = strlen(marker);
    for (size_t i = 0; i + marker_len <= len; i++) {
        if (memcmp(data + i, marker, marker_len) == 0) return 1;
    }
    return 0;
}

/* The demo application's health check: 1 passes, 0 never passes, -1 refuses. */
static int health_check(const ota_linux_t *port) {
    size_t len = 0;
    unsigned char *image = ota_linux_read_running(port, &len);
    if (!image) return 0;
    int verdict = contains(image, len, "OTA-HEALTH-REJECT") ? -1 : contains(image, len, "OTA-HEALTH-FAIL") ? 0 : 1;
    free(image);
    return verdict;
}

static void sleep_ms(uint32_t ms) {
    struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

/* Sends the core dump in `path`, as the ESP-IDF example sends the flash partition's at boot. */
static void send_coredump(const ota_config_t *config, const char *path) {
    static ota_linux_coredump_t file;
    static ota_coredump_sender_t sender;
    if (ota_coredump_begin(&sender, config, ota_linux_coredump_port(&file, path)) != OTA_OK) return;
    while (ota_coredump_outcome(&sender) == OTA_COREDUMP_PENDING) {
        uint32_t wait_ms = 0;
        if (ota_coredump_step(&sender, &wait_ms) != OTA_OK) break;
        sleep_ms(wait_ms);
    }
}

static void print_outcome(const ota_client_t *client, const ota_linux_t *port) {
    ota_reason_t reason;
    ota_event_t event = ota_client_last_event(client, &reason);
    const char *outcome = event != OTA_EVENT_NONE ? ota_event_name(event) : ota_client_last_check_status(client);
    printf("{\"outcome\":\"%s\",\"reason\":\"%s\",\"stopped\":\"%s\",\"running_build\":%lld,\"running_slot\":%u}\n", outcome,
           ota_reason_name(reason), ota_client_last_stop_status(client), (long long)ota_client_running_build(client), port->boot.active);
    fflush(stdout);
}

int main(int argc, char **argv) {
    static ota_client_t client;
    static ota_linux_t port;
    static uint8_t keys[OTA_MAX_SIGNING_KEYS][32];
    ota_config_t config = {.framework = "esp_idf", .chip_family = "esp32", .nvs_schema_version = -1, .token = getenv("OTA_TOKEN")};
    ota_linux_options_t options = {.argv = argv};
    const char *factory = NULL;
    int once = 0;
    static int16_t utc_offset;
    static uint16_t chip_revision;
    static uint32_t secure_version;
    static ota_linux_health_t health;
    int report_health = 0;
    const char *reset_reason = NULL;
    const char *coredump = NULL;
    enum { DIR_ = 256, SERVER, TOKEN, DEVICE, FRAMEWORK, CHIP, BOARD, HWREV, PARTITION, SECURITY, LABEL, NVS, KEY, REQSIG, FACTORY,
           FACTORY_BUILD, CHUNK, POLL, RETRY_BASE, RETRY_MAX, ATTEMPTS, DOWNLOAD_BUDGET, STOP_CHECK, TRIAL_TIMEOUT, TRIAL_BOOTS, STALL, DELTAS, ONCE, UTC_OFFSET, HEALTH, RESET_REASON,
           CHIP_REVISION, SECURE_VERSION, COREDUMP, HELP };
    static const struct option flags[] = {
        {"dir", required_argument, 0, DIR_}, {"server", required_argument, 0, SERVER}, {"token", required_argument, 0, TOKEN},
        {"device-id", required_argument, 0, DEVICE}, {"framework", required_argument, 0, FRAMEWORK}, {"chip", required_argument, 0, CHIP},
        {"board", required_argument, 0, BOARD}, {"hardware-revision", required_argument, 0, HWREV},
        {"partition-profile", required_argument, 0, PARTITION}, {"security-mode", required_argument, 0, SECURITY},
        {"version-label", required_argument, 0, LABEL}, {"nvs-schema-version", required_argument, 0, NVS}, {"key", required_argument, 0, KEY},
        {"require-signature", no_argument, 0, REQSIG}, {"factory", required_argument, 0, FACTORY},
        {"factory-build", required_argument, 0, FACTORY_BUILD}, {"chunk", required_argument, 0, CHUNK}, {"poll", required_argument, 0, POLL},
        {"retry-base", required_argument, 0, RETRY_BASE}, {"retry-max", required_argument, 0, RETRY_MAX},
        {"max-attempts", required_argument, 0, ATTEMPTS}, {"download-budget", required_argument, 0, DOWNLOAD_BUDGET}, {"stop-check", required_argument, 0, STOP_CHECK},
        {"trial-timeout", required_argument, 0, TRIAL_TIMEOUT},
        {"max-trial-boots", required_argument, 0, TRIAL_BOOTS}, {"stall-timeout", required_argument, 0, STALL}, {"deltas", no_argument, 0, DELTAS}, {"once", no_argument, 0, ONCE},
        {"utc-offset", required_argument, 0, UTC_OFFSET}, {"health", no_argument, 0, HEALTH}, {"reset-reason", required_argument, 0, RESET_REASON},
        {"chip-revision", required_argument, 0, CHIP_REVISION}, {"secure-version", required_argument, 0, SECURE_VERSION},
        {"coredump", required_argument, 0, COREDUMP},
        {"help", no_argument, 0, HELP}, {0, 0, 0, 0}};
    int flag;
    while ((flag = getopt_long(argc, argv, "", flags, NULL)) != -1) {
        switch (flag) {
        case DIR_: options.dir = optarg; break;
        case SERVER: config.server_url = optarg; break;
        case TOKEN: config.token = optarg; break;
        case DEVICE: config.device_id = optarg; break;
        case FRAMEWORK: config.framework = optarg; break;
        case CHIP: config.chip_family = optarg; break;
        case BOARD: config.board_id = optarg; break;
        case HWREV: config.hardware_revision = optarg; break;
        case PARTITION: config.partition_profile = optarg; break;
        case SECURITY: config.security_mode = optarg; break;
        case LABEL: config.version_label = optarg; break;
        case NVS: config.nvs_schema_version = atoi(optarg); break;
        case UTC_OFFSET:
            utc_offset = (int16_t)atoi(optarg);
            config.utc_offset_minutes = &utc_offset;
            break;
        case CHIP_REVISION:
        case SECURE_VERSION: {
            char *end = NULL;
            unsigned long value = strtoul(optarg, &end, 10);
            unsigned long most = flag == CHIP_REVISION ? 65535ul : 4294967295ul;
            if (!end || *end != '\0' || *optarg == '-' || value > most) {
                fprintf(stderr, "ota-device: --%s takes a whole number from 0 to %lu\n", flag == CHIP_REVISION ? "chip-revision" : "secure-version", most);
                return 2;
            }
            if (flag == CHIP_REVISION) {
                chip_revision = (uint16_t)value;
                config.chip_revision = &chip_revision;
            } else {
                secure_version = (uint32_t)value;
                config.secure_version = &secure_version;
            }
            break;
        }
        case HEALTH:
            /* Read at each check; nothing is sent before ota_linux_health_start counts this boot. */
            report_health = 1;
            config.health = &health.keeper.health;
            break;
        case RESET_REASON: reset_reason = optarg; break;
        case COREDUMP: coredump = optarg; break;
        case KEY:
            if (config.signing_key_count == OTA_MAX_SIGNING_KEYS || parse_key(optarg, keys[config.signing_key_count]) != 0) {
                fprintf(stderr, "ota-device: --key takes up to %d Ed25519 public keys of 32 bytes (hex or base64)\n", OTA_MAX_SIGNING_KEYS);
                return 2;
            }
            config.signing_key_count++;
            break;
        case REQSIG: config.require_signature = true; break;
        case FACTORY: factory = optarg; break;
        case FACTORY_BUILD: config.factory_build_number = atoll(optarg); break;
        case CHUNK: config.chunk_bytes = (uint32_t)strtoul(optarg, NULL, 10); break;
        case POLL: config.poll_interval_s = (uint32_t)strtoul(optarg, NULL, 10); break;
        case RETRY_BASE: config.retry_base_ms = (uint32_t)strtoul(optarg, NULL, 10); break;
        case RETRY_MAX: config.retry_max_ms = (uint32_t)strtoul(optarg, NULL, 10); break;
        case ATTEMPTS: config.max_download_attempts = (uint32_t)strtoul(optarg, NULL, 10); break;
        case DOWNLOAD_BUDGET: config.download_budget_s = (uint32_t)strtoul(optarg, NULL, 10); break;
        case STOP_CHECK: config.stop_check_bytes = (uint32_t)strtoul(optarg, NULL, 10); break;
        case TRIAL_TIMEOUT: config.trial_timeout_s = (uint32_t)strtoul(optarg, NULL, 10); break;
        case TRIAL_BOOTS: options.max_trial_boots = (unsigned)strtoul(optarg, NULL, 10); break;
        case STALL: options.stall_timeout_s = (unsigned)strtoul(optarg, NULL, 10); break;
        case DELTAS: config.apply_deltas = true; break;
        case ONCE: once = 1; break;
        case HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!options.dir || !config.server_url || !config.token) {
        fprintf(stderr, "ota-device: --dir, --server and a token (--token or OTA_TOKEN) are required\n");
        usage(stderr);
        return 2;
    }
    config.signing_keys = (const uint8_t(*)[32])keys;

    char boot_path[512];
    struct stat info;
    snprintf(boot_path, sizeof boot_path, "%s/boot", options.dir);
    if (stat(boot_path, &info) != 0) {
        mkdir(options.dir, 0700);
        if (!factory || ota_linux_install_factory(options.dir, factory) != 0) {
            fprintf(stderr, "ota-device: %s holds no device; pass --factory FILE to install its first image\n", options.dir);
            return 2;
        }
    }
    if (ota_linux_init(&port, &options) != 0) return 1;
    config.ports = &port.ports;
    /* The image that runs is the running slot's file, whole: its SHA-256 is what a patch starts from
     * when no saved state says it. */
    static uint8_t running_sha256[32];
    if (config.apply_deltas) {
        size_t len = 0;
        unsigned char *image = ota_linux_read_running(&port, &len);
        if (image) {
            crypto_hash_sha256(running_sha256, image, len);
            config.factory_image_sha256 = running_sha256;
            free(image);
        }
    }
    ota_err_t err = ota_client_init(&client, &config);
    if (err != OTA_OK) {
        fprintf(stderr, "ota-device: the client refused its configuration (%d); see ota_client.h for each field's range\n", (int)err);
        return 2;
    }
    if (report_health) ota_linux_health_start(&health, &port, &client, reset_reason);
    if (coredump) send_coredump(&config, coredump);
    int health_checked = 0;
    for (;;) {
        uint32_t wait_ms = 0;
        if (report_health) ota_linux_health_update(&health, &client);
        err = ota_client_step(&client, &wait_ms);
        if (err != OTA_OK) ota_linux_log(&port, OTA_LOG_ERROR, "a port failed; retrying");
        if (ota_client_in_trial(&client) && !health_checked) {
            health_checked = 1;
            int verdict = health_check(&port);
            if (verdict > 0) ota_client_confirm(&client);
            else if (verdict < 0) ota_client_reject(&client);
            else ota_linux_log(&port, OTA_LOG_WARN, "the health check does not pass: waiting for the trial to time out");
            continue;
        }
        ota_reason_t reason;
        int settled = ota_client_phase(&client) == OTA_PHASE_IDLE && !ota_client_report_pending(&client);
        int finished = ota_client_last_event(&client, &reason) != OTA_EVENT_NONE ||
                       (ota_client_last_check_status(&client)[0] && strcmp(ota_client_last_check_status(&client), "offered") != 0);
        if (once && settled && finished) {
            print_outcome(&client, &port);
            ota_linux_close(&port);
            return 0;
        }
        sleep_ms(wait_ms < 1000 ? wait_ms : 1000);
    }
}
