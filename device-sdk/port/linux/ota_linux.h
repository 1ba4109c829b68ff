/*
 * The linux port: libcurl for HTTP, two slot files and a boot pointer file for the flash, a state
 * file for the saved record, libsodium for SHA-256 and Ed25519, and a reboot that re-executes the
 * process. With it the core runs as a real command-line device (examples/linux-device).
 *
 * A device directory holds:
 *   slot0.bin, slot1.bin   the two application slots
 *   boot                   the boot pointer: which slot boots, whether as a trial, and how often it did
 *   state                  the core's saved record
 * Every file that must survive a power cut is replaced by writing a new copy, syncing it and
 * renaming it over the old one, so a cut leaves either the old or the new file whole.
 */
#ifndef OTA_LINUX_H
#define OTA_LINUX_H

#include <stdio.h>

#include <curl/curl.h>
#include <sodium.h>

#include "ota/ota_client.h"
#include "ota/ota_coredump.h"

typedef struct {
    const char *dir;             /* the device directory */
    unsigned max_trial_boots;    /* boots a trial gets before the "bootloader" goes back; default 1 */
    unsigned stall_timeout_s;    /* no byte for this long breaks a download; default 30 */
    unsigned request_timeout_s;  /* longest check or report; default 30 */
    char *const *argv;           /* what reboot re-executes */
    FILE *log;                   /* where log lines go; default stderr */
} ota_linux_options_t;

/* The boot pointer, as the linux "bootloader" keeps it. */
typedef struct {
    unsigned active;             /* the slot that boots */
    unsigned previous;           /* the slot to go back to when a trial fails */
    unsigned trial;              /* 1 while the active slot is a trial */
    unsigned attempts;           /* boots of the trial so far */
} ota_linux_boot_t;

typedef struct {
    ota_linux_options_t options;
    ota_ports_t ports;
    ota_linux_boot_t boot;
    /* HTTP */
    CURL *post;
    CURLM *multi;
    CURL *get;
    ota_http_head_t head;     /* filled by header lines while head_filling; copied out when complete */
    int head_filling;
    unsigned char buffer[CURL_MAX_WRITE_SIZE];
    size_t buffered, consumed;
    int get_done;
    int headers_done;
    CURLcode get_result;
    int paused;
    char *response;
    size_t response_len, response_cap;
    int response_overflow;
    struct curl_slist *headers;
    /* slots */
    FILE *slot_file;
} ota_linux_t;

/*
 * Runs the "bootloader" (a trial boot is counted, and one that used up its boots is abandoned for
 * the previous slot), then fills port->ports. 0 on success; -1 with a message on stderr.
 */
int ota_linux_init(ota_linux_t *port, const ota_linux_options_t *options);

/* The crypto port alone: ota_linux_crypto.h. */

/* Installs `image` in slot 0 as the running image of a new device directory. 0 on success. */
int ota_linux_install_factory(const char *dir, const char *image_path);

/* Reads the whole running slot into a new buffer (the application "runs" it); NULL on failure. */
unsigned char *ota_linux_read_running(const ota_linux_t *port, size_t *len);

/*
 * Device health (ota/ota_health.h), kept in the device directory's `health` file: each start of
 * the process a boot, with the reset reason given (an OTA reboot's re-execution is "software"),
 * and the time since it started as uptime. Point ota_config_t.health at `keeper.health`.
 */
#define OTA_LINUX_RESET_REASON_ENV "OTA_DEVICE_RESET_REASON"
#define OTA_LINUX_HEALTH_SAVE_S 60u

typedef struct {
    ota_health_keeper_t keeper;
    const char *dir;
    uint64_t started_at_s;       /* the monotonic clock when the process started */
    uint64_t saved_at_s;         /* seconds into this boot of the last save */
} ota_linux_health_t;

/* Counts this boot; call once after ota_client_init. `reset_reason` NULL: "power_on". */
void ota_linux_health_start(ota_linux_health_t *health, const ota_linux_t *port, const ota_client_t *client, const char *reset_reason);

/* Brings the report up to now; call before each ota_client_step. */
void ota_linux_health_update(ota_linux_health_t *health, const ota_client_t *client);

/* Writes one log line (the system port's log; ctx is the ota_linux_t). */
void ota_linux_log(void *ctx, ota_log_level_t level, const char *message);

void ota_linux_close(ota_linux_t *port);

/* A core dump kept in a file (ota/ota_coredump.h): its size, its bytes, and erasing it deletes the
 * file. A missing file is no dump. In ota_linux_coredump.c. */
typedef struct {
    ota_coredump_port_t port;
    const char *path;
} ota_linux_coredump_t;

const ota_coredump_port_t *ota_linux_coredump_port(ota_linux_coredump_t *dump, const char *path);

#endif
