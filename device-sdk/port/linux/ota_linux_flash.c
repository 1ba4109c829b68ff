/*
 * The linux port's "flash": two slot files, a boot pointer file and a state file in the device
 * directory, and a "bootloader" that counts the boots of a trial and goes back to the previous
 * slot once the trial used them up, as ESP-IDF's bootloader does with app rollback enabled.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ota_linux_internal.h"

static void slot_path(const ota_linux_t *port, unsigned slot, char *out, size_t cap) {
    snprintf(out, cap, "%s/slot%u.bin", port->options.dir, slot);
}

static unsigned inactive_slot(const ota_linux_t *port) {
    return 1u - port->boot.active;
}

int ota_linux_replace_file(const char *dir, const char *name, const void *data, size_t len) {
    char path[512], temporary[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(temporary, sizeof temporary, "%s/.%s.new", dir, name);
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    const unsigned char *bytes = data;
    size_t written = 0;
    while (written < len) {
        ssize_t n = write(fd, bytes + written, len - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        written += (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) return -1;
    if (rename(temporary, path) != 0) return -1;
    /* The rename itself is durable only once the directory is synced. */
    int dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dir_fd < 0) return -1;
    int synced = fsync(dir_fd);
    close(dir_fd);
    return synced;
}

/* ---- the boot pointer ---- */

static int boot_save(const ota_linux_t *port, const ota_linux_boot_t *boot) {
    char text[96];
    int n = snprintf(text, sizeof text, "active=%u previous=%u trial=%u attempts=%u\n", boot->active, boot->previous, boot->trial, boot->attempts);
    return ota_linux_replace_file(port->options.dir, "boot", text, (size_t)n);
}

static int boot_load(const char *dir, ota_linux_boot_t *boot) {
    char path[512], text[96] = "";
    snprintf(path, sizeof path, "%s/boot", dir);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    size_t n = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[n] = '\0';
    if (sscanf(text, "active=%u previous=%u trial=%u attempts=%u", &boot->active, &boot->previous, &boot->trial, &boot->attempts) != 4 ||
        boot->active > 1 || boot->previous > 1) {
        return -1;
    }
    return 0;
}

int ota_linux_boot(ota_linux_t *port) {
    if (boot_load(port->options.dir, &port->boot) != 0) {
        fprintf(stderr, "ota-linux: %s/boot is missing or unreadable: install a factory image first\n", port->options.dir);
        return -1;
    }
    ota_linux_boot_t *boot = &port->boot;
    if (boot->trial) {
        boot->attempts++;
        if (boot->attempts > port->options.max_trial_boots) {
            /* The trial had its boots and never confirmed: go back, as a bootloader would. */
            boot->active = boot->previous;
            boot->trial = 0;
            boot->attempts = 0;
        }
        if (boot_save(port, boot) != 0) return -1;
    }
    return 0;
}

int ota_linux_install_factory(const char *dir, const char *image_path) {
    FILE *in = fopen(image_path, "rb");
    if (!in) return -1;
    char path[512];
    snprintf(path, sizeof path, "%s/slot0.bin", dir);
    FILE *out = fopen(path, "wb");
    if (!out) {
        fclose(in);
        return -1;
    }
    unsigned char buffer[8192];
    size_t n;
    int failed = 0;
    while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) failed |= fwrite(buffer, 1, n, out) != n;
    failed |= fflush(out) != 0 || fsync(fileno(out)) != 0;
    fclose(in);
    failed |= fclose(out) != 0;
    if (failed) return -1;
    ota_linux_t port = {.options = {.dir = dir}};
    ota_linux_boot_t boot = {.active = 0, .previous = 0, .trial = 0, .attempts = 0};
    return boot_save(&port, &boot);
}

unsigned char *ota_linux_read_running(const ota_linux_t *port, size_t *len) {
    char path[512];
    slot_path(port, port->boot.active, path, sizeof path);
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    struct stat info;
    if (fstat(fileno(file), &info) != 0) {
        fclose(file);
        return NULL;
    }
    unsigned char *image = malloc((size_t)info.st_size + 1);
    if (image && fread(image, 1, (size_t)info.st_size, file) != (size_t)info.st_size) {
        free(image);
        image = NULL;
    }
    fclose(file);
    if (image) *len = (size_t)info.st_size;
    return image;
}

/* ---- the slot port ---- */

static ota_err_t boot_info(void *ctx, ota_boot_info_t *info) {
    ota_linux_t *port = ctx;
    info->running_slot = (uint8_t)port->boot.active;
    info->pending_verify = port->boot.trial != 0;
    return OTA_OK;
}

static ota_err_t slot_open(void *ctx, uint32_t image_size, uint32_t resume_offset) {
    ota_linux_t *port = ctx;
    (void)image_size;
    if (port->slot_file) fclose(port->slot_file);
    char path[512];
    slot_path(port, inactive_slot(port), path, sizeof path);
    /* Offset 0 erases the slot; a resume keeps what a flush made durable and drops the rest. */
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, resume_offset) != 0) {
        if (fd >= 0) close(fd);
        return OTA_ERR_IO;
    }
    port->slot_file = fdopen(fd, "r+b");
    if (!port->slot_file) return OTA_ERR_IO;
    /* Unbuffered, as flash is written: the file holds every byte the core wrote (a kill loses none
     * of them, and a test can see how far the device got); flush still syncs them to the disk. */
    setvbuf(port->slot_file, NULL, _IONBF, 0);
    return OTA_OK;
}

static ota_err_t slot_write(void *ctx, uint32_t offset, const uint8_t *data, size_t len) {
    ota_linux_t *port = ctx;
    if (!port->slot_file || fseek(port->slot_file, (long)offset, SEEK_SET) != 0) return OTA_ERR_IO;
    return fwrite(data, 1, len, port->slot_file) == len ? OTA_OK : OTA_ERR_IO;
}

/* Reads bytes of a slot's file; how many it read (fewer past its end), or -1 when it cannot be opened. */
static long read_slot_file(const ota_linux_t *port, unsigned slot, uint32_t offset, uint8_t *data, size_t len) {
    char path[512];
    slot_path(port, slot, path, sizeof path);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, data + done, len - done, (off_t)offset + (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    close(fd);
    return (long)done;
}

static ota_err_t slot_read(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    ota_linux_t *port = ctx;
    if (port->slot_file) fflush(port->slot_file);
    return read_slot_file(port, inactive_slot(port), offset, data, len) == (long)len ? OTA_OK : OTA_ERR_IO;
}

/* The base of a delta patch: the running slot's file; a read past its end is refused. */
static ota_err_t slot_read_running(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    ota_linux_t *port = ctx;
    long done = read_slot_file(port, port->boot.active, offset, data, len);
    return done < 0 ? OTA_ERR_IO : done == (long)len ? OTA_OK : OTA_ERR_INVALID_ARG;
}

static ota_err_t slot_flush(void *ctx) {
    ota_linux_t *port = ctx;
    if (!port->slot_file) return OTA_ERR_STATE;
    return fflush(port->slot_file) == 0 && fsync(fileno(port->slot_file)) == 0 ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t slot_finish(void *ctx) {
    ota_linux_t *port = ctx;
    if (!port->slot_file) return OTA_ERR_STATE;
    int failed = fflush(port->slot_file) != 0 || fsync(fileno(port->slot_file)) != 0;
    failed |= fclose(port->slot_file) != 0;
    port->slot_file = NULL;
    return failed ? OTA_ERR_IO : OTA_OK;
}

static ota_err_t slot_activate(void *ctx) {
    ota_linux_t *port = ctx;
    ota_linux_boot_t next = {.active = inactive_slot(port), .previous = port->boot.active, .trial = 1, .attempts = 0};
    return boot_save(port, &next) == 0 ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t slot_mark_valid(void *ctx) {
    ota_linux_t *port = ctx;
    if (!port->boot.trial) return OTA_OK;
    ota_linux_boot_t kept = port->boot;
    kept.trial = 0;
    kept.attempts = 0;
    if (boot_save(port, &kept) != 0) return OTA_ERR_IO;
    port->boot = kept;
    return OTA_OK;
}

static ota_err_t slot_rollback(void *ctx) {
    ota_linux_t *port = ctx;
    ota_linux_boot_t back = {.active = port->boot.previous, .previous = port->boot.previous, .trial = 0, .attempts = 0};
    return boot_save(port, &back) == 0 ? OTA_OK : OTA_ERR_IO;
}

/* ---- the state port ---- */

static ota_err_t state_load(void *ctx, void *buf, size_t cap, size_t *len) {
    ota_linux_t *port = ctx;
    char path[512];
    snprintf(path, sizeof path, "%s/state", port->options.dir);
    *len = 0;
    FILE *file = fopen(path, "rb");
    if (!file) return errno == ENOENT ? OTA_OK : OTA_ERR_IO;
    *len = fread(buf, 1, cap, file);
    /* A record longer than the buffer is not ours: report a length the core will refuse. */
    if (*len == cap && fgetc(file) != EOF) *len = cap + 1;
    fclose(file);
    return OTA_OK;
}

static ota_err_t state_save(void *ctx, const void *buf, size_t len) {
    ota_linux_t *port = ctx;
    return ota_linux_replace_file(port->options.dir, "state", buf, len) == 0 ? OTA_OK : OTA_ERR_IO;
}

void ota_linux_flash_bind(ota_linux_t *port) {
    port->ports.slot = (ota_slot_port_t){
        .ctx = port,
        .boot_info = boot_info,
        .open = slot_open,
        .write = slot_write,
        .read = slot_read,
        .flush = slot_flush,
        .finish = slot_finish,
        .activate = slot_activate,
        .mark_valid = slot_mark_valid,
        .rollback = slot_rollback,
        .read_running = slot_read_running,
    };
    port->ports.state = (ota_state_port_t){.ctx = port, .load = state_load, .save = state_save};
}
