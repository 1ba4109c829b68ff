/*
 * The OTA client: checks for updates, downloads them in chunks with resume, verifies SHA-256 and
 * (for signed builds) Ed25519, writes the inactive slot, reports every step, reboots into the new
 * image as a trial, and confirms it once the application's health check passes, or rolls it back.
 * The protocol is the device API of docs/device-integration.md.
 *
 * Shaped like ESP-IDF's esp_https_ota: a config struct, a client the caller owns (no allocation
 * anywhere in the core), and a step function called until it has nothing to do:
 *
 *     static ota_client_t client;
 *     ota_client_init(&client, &config);
 *     for (;;) {
 *         uint32_t wait_ms;
 *         ota_client_step(&client, &wait_ms);
 *         if (ota_client_in_trial(&client) && my_health_check_passed()) ota_client_confirm(&client);
 *         sleep_ms(wait_ms);
 *     }
 */
#ifndef OTA_CLIENT_H
#define OTA_CLIENT_H

#include "ota/ota_delta.h"
#include "ota/ota_health.h"
#include "ota/ota_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fixed sizes of the client's buffers; the whole client is sizeof(ota_client_t). */
#define OTA_URL_MAX 640          /* the offer's download URL, and the endpoint URLs */
#define OTA_REQUEST_MAX 1024     /* a check or status request body: a check with health holds about 150 bytes of it */
#define OTA_RESPONSE_MAX 2048    /* a check or status answer body: an offer with a patch holds two URLs */
#define OTA_READ_BUFFER 1024     /* bytes read from the network per slot write */
#define OTA_MAX_SIGNING_KEYS 2   /* pinned Ed25519 keys checked at once (a key and its successor) */

/* The crypto states hold the port's own structs (64-bit counters): aligned for any of them. */
#ifdef __cplusplus
#define OTA_STATE_ALIGN alignas(16)
#else
#define OTA_STATE_ALIGN _Alignas(16)
#endif

/* Defaults of the ota_config_t fields left 0. */
#define OTA_DEFAULT_CHUNK_BYTES 16384u
#define OTA_DEFAULT_POLL_INTERVAL_S 1800u
#define OTA_DEFAULT_RETRY_BASE_MS 2000u
#define OTA_DEFAULT_RETRY_MAX_MS 300000u
/* The longest Retry-After the client waits (a day): a longer one, a proxy's mistake, would
 * silence the device for weeks. */
#define OTA_RETRY_AFTER_MAX_S 86400u
#define OTA_DEFAULT_MAX_DOWNLOAD_ATTEMPTS 10u
#define OTA_DEFAULT_TRIAL_TIMEOUT_S 300u
#define OTA_DEFAULT_DOWNLOAD_BUDGET_S 3600u
#define OTA_DEFAULT_STOP_CHECK_BYTES 262144u
/* Bytes of the slot one step hashes again from flash at most (after a reboot mid-update). */
#define OTA_HASH_STEP_BYTES 32768u
/* The delta patch format the client applies (docs/api.md, "Delta patches"). */
#define OTA_DELTA_FORMAT "detools-sequential-heatshrink-8-7"

typedef struct {
    /* The service's base URL, e.g. "https://ota.example.com" (no trailing slash). */
    const char *server_url;
    /* A project token of `device` scope or a per-device token; never a personal or `api` token. */
    const char *token;
    /* The unit's own id (1 to 128 of A-Za-z0-9._:-). May be NULL with a per-device token. */
    const char *device_id;
    /* What the check reports (docs/device-integration.md). NULL or "" leaves an optional one out. */
    const char *framework;          /* "esp_idf" or "arduino"; required */
    const char *chip_family;        /* e.g. "esp32s3"; required */
    const char *board_id;
    const char *hardware_revision;
    const char *partition_profile;
    const char *security_mode;
    const char *version_label;
    int32_t nvs_schema_version;     /* < 0: not reported */
    /* The device's local time's offset from UTC in minutes, east positive (120 for UTC+02:00),
     * read at every check, for deployments whose maintenance windows are in device local time
     * (docs/api.md, "Maintenance windows"). Point it at a value the firmware keeps current (after
     * its clock and time zone are set, and across summer time); NULL: not reported. A value
     * outside -720..840 is not reported either. */
    const int16_t *utc_offset_minutes;
    /* What the device's bootloader checks of an image, read at every check (docs/api.md, "The
     * image"): a build whose image leaves the chip revision out of its range, or whose
     * secure_version is below the eFuse one, is not offered. The chip revision counts as ESP-IDF's
     * efuse_hal_chip_revision() does, major * 100 + minor (v0.4 is 4); the secure version is the
     * eFuse anti-rollback version (esp_efuse_read_secure_version()), for firmware with
     * anti-rollback on. The ESP-IDF port reads both (ota_esp_idf_chip_read). NULL: not reported. */
    const uint16_t *chip_revision;
    const uint32_t *secure_version;
    /* How the device has run since it installed the build it runs, read at every check
     * (ota/ota_health.h): point it at an ota_health_keeper_t's `health`. NULL, or no boot counted
     * yet: not reported. */
    const ota_health_t *health;
    /* The build_number of the image that runs, for when no saved state says it: a factory image
     * (usually 0), or an image whose saved state was lost. Firmware that knows its own build
     * number passes it, so that a lost record does not make the server offer it again. */
    int64_t factory_build_number;
    /* Pinned Ed25519 public keys. A signed offer must verify against one of them. */
    const uint8_t (*signing_keys)[32];
    size_t signing_key_count;       /* 0..OTA_MAX_SIGNING_KEYS */
    /* Refuse an offer that carries no signature (signature_invalid). Needs signing keys. */
    bool require_signature;
    /* Bytes between two saves of the download offset: at most this much is fetched again after a
     * power cut. A multiple of 4096 (flash sectors). Default OTA_DEFAULT_CHUNK_BYTES. */
    uint32_t chunk_bytes;
    /* Seconds between checks when the server suggests none. Default OTA_DEFAULT_POLL_INTERVAL_S. */
    uint32_t poll_interval_s;
    /* First retry delay after a failed request, doubled per failure up to retry_max_ms, +-20%. */
    uint32_t retry_base_ms;
    uint32_t retry_max_ms;
    /* A download fails (download_failed) only when both hold: this many attempts in a row received
     * no byte (default OTA_DEFAULT_MAX_DOWNLOAD_ATTEMPTS), and none has for download_budget_s. */
    uint32_t max_download_attempts;
    /* Seconds a download may go without a byte, across attempts, through a server's 429s and 5xx
     * (each waited out by its Retry-After or the back-off) and refused connections, before it
     * fails. The bytes it had are kept: the same build offered again resumes from them.
     * Default OTA_DEFAULT_DOWNLOAD_BUDGET_S. */
    uint32_t download_budget_s;
    /* Bytes between two asks whether the offer still stands (POST /api/v1/ota/offer/): a pause,
     * a cancel or an archive stops the download within this many bytes, and the client always
     * asks once more before it switches the boot slot. A multiple of chunk_bytes.
     * Default OTA_DEFAULT_STOP_CHECK_BYTES (256 KiB: six asks for a 1.5 MB image). */
    uint32_t stop_check_bytes;
    /* Seconds a booted trial image has, in one boot, to be confirmed before it is rolled back
     * (confirm_timeout). Default OTA_DEFAULT_TRIAL_TIMEOUT_S. */
    uint32_t trial_timeout_s;
    /* Take delta patches (device-sdk/README.md, "Delta updates"): the check says which image runs
     * (current_hash) and that the client applies OTA_DELTA_FORMAT, and an offer that carries a
     * patch from that image is downloaded as the patch and applied into the slot. A patch that
     * fails falls back to the full image. Needs the slot port's read_running. */
    bool apply_deltas;
    /* The SHA-256 of the image that runs, for when no saved state says it (a factory image, or an
     * image whose saved state was lost); NULL: unknown, and deltas start from the first full
     * update. A wrong one costs a patch download: its result fails the image's SHA-256 check. */
    const uint8_t *factory_image_sha256;
    const ota_ports_t *ports;
} ota_config_t;

/* Where an update stands, as saved across power cuts. */
typedef enum {
    OTA_PHASE_IDLE = 0,        /* no update under way */
    OTA_PHASE_DOWNLOADING = 1, /* writing the inactive slot; `offset` bytes of it are durable */
    OTA_PHASE_ACTIVATING = 2,  /* the image is whole and verified; the boot choice is being switched */
    OTA_PHASE_REBOOTING = 3,   /* the next boot runs the new image as a trial */
    OTA_PHASE_TRIAL = 4,       /* the new image runs; waiting for the application's health check */
} ota_phase_t;

/* The device API's status events (docs/device-integration.md, "Report each step"). */
typedef enum {
    OTA_EVENT_NONE = 0,
    OTA_EVENT_OFFERED,
    OTA_EVENT_DOWNLOAD_STARTED,
    OTA_EVENT_DOWNLOADED,
    OTA_EVENT_FLASHED,
    OTA_EVENT_VALIDATED,
    OTA_EVENT_REBOOT,
    OTA_EVENT_CONFIRMED,
    OTA_EVENT_FAILED,
    OTA_EVENT_ROLLED_BACK,
} ota_event_t;

typedef enum {
    OTA_REASON_NONE = 0,
    OTA_REASON_SIGNATURE_INVALID,
    OTA_REASON_CHECKSUM_MISMATCH,
    OTA_REASON_DOWNLOAD_FAILED,
    OTA_REASON_FLASH_WRITE_FAILED,
    OTA_REASON_CONFIRM_TIMEOUT,
    OTA_REASON_BOOT_FAILED,
    OTA_REASON_HEALTH_CHECK_FAILED, /* rolled_back: the application refused the trial (ota_client_reject) */
} ota_reason_t;

/*
 * Where an update stands, as the saved record holds it. Saved whole through the state port after
 * every change of phase and every chunk, in a fixed, versioned byte layout written and read field
 * by field (src/ota_record.h: 876 bytes on every ABI). A record that cannot be read (none, cut
 * short, damaged, a later version) is treated as absent: see ota_client_init for what each boot
 * then does.
 */
typedef struct {
    uint8_t phase;              /* ota_phase_t */
    uint8_t target_slot;        /* the slot the update writes and then boots */
    uint8_t has_signature;
    uint8_t pending_event;      /* a terminal event not yet accepted by the server (ota_event_t) */
    uint8_t pending_reason;     /* its ota_reason_t */
    int64_t running_build;      /* the build_number of the image that runs: current_build_number */
    int64_t build_number;       /* the offer's */
    int64_t pending_build;      /* build_number sent with a pending `confirmed` */
    uint32_t image_size;
    uint32_t offset;            /* bytes of the slot that a flush made durable; a multiple of the chunk
                                   (of a flash sector while a patch is applied) */
    char deployment_id[40];
    char pending_deployment_id[40];
    uint8_t sha256[32];
    uint8_t signature[64];
    /* The image that runs, as the check reports it (current_hash): the last confirmed offer's. */
    uint8_t has_running_sha256;
    uint8_t running_sha256[32];
    /* The download is the offer's delta patch, applied into the slot as it arrives. */
    uint8_t delta;
    uint8_t delta_failure;      /* not 0: a patch to this build failed, and why (a code of ota_client.c); its image is downloaded */
    uint32_t patch_size;
    uint32_t patch_offset;      /* patch bytes the apply state below has consumed */
    uint8_t patch_sha256[32];
    /* The applier's state when `offset` and `patch_offset` were saved (ota_delta_save). */
    uint8_t apply_state[OTA_DELTA_SAVED_BYTES];
} ota_record_t;

/* The client. Its fields are the core's: read them only through the functions below. */
typedef struct {
    ota_config_t config;
    ota_record_t record;
    /* What the current download needs in memory. */
    char url[OTA_URL_MAX];
    /* The ETag the server answered for this download in this boot: what a resume's If-Range sends
     * back (object storage's is an MD5, the service's the build's SHA-256); empty until one came. */
    char etag[72];
    bool url_valid;
    bool slot_open;
    bool record_missing;        /* init found no readable saved record (none, or unreadable) and started afresh */
    bool http_open;
    bool verified;              /* the slot's image was hashed and verified in this boot */
    bool hashes_valid;          /* the hash states hold the slot's first `hashed` bytes */
    uint32_t received;          /* bytes of the download received: of the image, or of the patch */
    uint32_t written;           /* bytes written to the slot; >= record.offset (== received for an image) */
    uint32_t hashed;            /* bytes passed to the hashes; the hashes are valid when == written */
    uint32_t attempt_bytes;     /* bytes the open GET delivered */
    uint32_t download_failures; /* attempts in a row that delivered nothing */
    uint32_t asked_at;          /* `received` when the client last asked whether the offer stands */
    uint64_t next_ask_at;       /* before the switch: when to ask again after no answer or a hold */
    uint32_t ask_failures;      /* asks in a row before the switch that got no answer */
    OTA_STATE_ALIGN uint8_t sha256_state[OTA_CRYPTO_STATE_MAX];
    OTA_STATE_ALIGN uint8_t ed25519_state[OTA_MAX_SIGNING_KEYS][OTA_CRYPTO_STATE_MAX];
    uint8_t read_buffer[OTA_READ_BUFFER];
    /* Patch bytes of read_buffer received but not yet applied (the applier paused in them). */
    uint16_t patch_pending_at;
    uint16_t patch_pending;
    bool slot_write_failed;     /* the applier's last write to the slot failed */
    ota_delta_t delta;          /* the applier, while a patch is applied */
    char request[OTA_REQUEST_MAX];
    char response[OTA_RESPONSE_MAX];
    /* Timing, in the system port's milliseconds. */
    uint64_t next_check_at;
    uint64_t next_download_at;
    uint64_t last_byte_at;      /* the download's last byte, or its start: download_budget_s counts from it */
    uint64_t next_report_at;
    uint64_t trial_started_at;
    uint32_t check_failures;
    uint32_t report_failures;
    uint8_t running_slot;       /* from the boot */
    bool confirm_requested;
    bool reject_requested;
    bool held;                  /* a pause holds the download: the budget does not run until the offer stands again */
    bool booted_after_rollback; /* this boot found the trial abandoned by the bootloader */
    /* The last terminal outcome and the last check's answer, for the application. */
    ota_event_t last_event;
    ota_reason_t last_reason;
    char last_check_status[32];
    char last_stop_status[32];  /* why the last stopped update stopped ("deployment_paused", ...) */
} ota_client_t;

/*
 * Loads the saved record and works out from the boot where an update stands: a trial that booted,
 * or one the bootloader refused (rolled_back, boot_failed). Call once per boot, before any step.
 * With no readable record the client starts idle, running factory_build_number; if the boot runs
 * a trial all the same (the record was lost: an NVS erase, a layout this image cannot read), the
 * application's health check decides it within trial_timeout_s, as for any trial, so a healthy
 * image is never rolled back for want of a record and no trial waits forever.
 * OTA_ERR_INVALID_ARG names no field: check config values against the comments above.
 */
ota_err_t ota_client_init(ota_client_t *client, const ota_config_t *config);

/*
 * Does one bounded piece of work (a check, up to one chunk of download, a report, an install
 * step) and sets *wait_ms to how long the caller may sleep before the next step is useful.
 * Errors of the network or the server are handled inside (retries, reports); what is returned is
 * an error of a port that the client cannot work around.
 *
 * The bounds of one step, for a caller that must feed a watchdog:
 * - work: it hashes at most one chunk received from the network (chunk_bytes) or
 *   OTA_HASH_STEP_BYTES read back from flash, never the whole image at once; SHA-256 and, for a
 *   signed build, SHA-512 per pinned key run over those bytes;
 * - blocking: at most three HTTP requests (a check and the two reports of a new offer), or one
 *   download opened and read up to the next chunk boundary followed by one ask whether the offer
 *   stands, or the reports and ask around the install; each request is bounded by the HTTP port's
 *   timeouts (the linux port: 30 s to connect and per stalled read; ESP-IDF: the port's
 *   timeout_ms). Waiting on a socket blocks the task, so lower-priority tasks (IDLE, which feeds
 *   ESP-IDF's task watchdog) run meanwhile; only the hashing keeps the CPU, for a chunk at a time.
 */
ota_err_t ota_client_step(ota_client_t *client, uint32_t *wait_ms);

/*
 * How many RTOS ticks to wait for `wait_ms` (what ota_client_step answered) at `tick_rate_hz`
 * (FreeRTOS's configTICK_RATE_HZ): at least one, so that the idle task, which feeds ESP-IDF's task
 * watchdog, runs between steps that do not wait. `pdMS_TO_TICKS(1)` is 0 at 100 Hz.
 */
uint32_t ota_client_wait_ticks(uint32_t wait_ms, uint32_t tick_rate_hz);

/* True while a new image runs as a trial: the application runs its health check, then confirms. */
bool ota_client_in_trial(const ota_client_t *client);

/*
 * True when this boot found that the bootloader abandoned the trial of a new image (it crashed or
 * would not boot) and went back: the reset that ended the trial is that build's, reported with
 * `rolled_back`, `boot_failed` (ota_health_boot's reset_ended_a_trial).
 */
bool ota_client_booted_after_rollback(const ota_client_t *client);

/* The application's health check passed: keep the new image and report `confirmed`. Once is
 * enough: a failed write of the choice is tried again at each step until it holds. */
ota_err_t ota_client_confirm(ota_client_t *client);

/* The application's health check failed: roll back now (rolled_back, health_check_failed). */
ota_err_t ota_client_reject(ota_client_t *client);

/* The phase of the saved record. */
ota_phase_t ota_client_phase(const ota_client_t *client);

/* The build_number of the running image (what the check sends as current_build_number). */
int64_t ota_client_running_build(const ota_client_t *client);

/* True while a terminal event waits for the server to accept it. */
bool ota_client_report_pending(const ota_client_t *client);

/* The last terminal outcome of this boot: OTA_EVENT_NONE, CONFIRMED, FAILED or ROLLED_BACK. */
ota_event_t ota_client_last_event(const ota_client_t *client, ota_reason_t *reason);

/* The `status` of the last check answered in this boot ("offered", "up_to_date", ...); "" before any. */
const char *ota_client_last_check_status(const ota_client_t *client);

/* Why the last update of this boot stopped because its offer no longer stood: a stop status of
 * the service ("deployment_paused", "deployment_cancelled", "build_archived", ...), or
 * "token_refused" when the service no longer takes the device's token; "" when none did. */
const char *ota_client_last_stop_status(const ota_client_t *client);

/* The wire names of events and reasons ("download_started", "checksum_mismatch"). */
const char *ota_event_name(ota_event_t event);
const char *ota_reason_name(ota_reason_t reason);

#ifdef __cplusplus
}
#endif

#endif /* OTA_CLIENT_H */
