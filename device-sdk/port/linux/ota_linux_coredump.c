/* A core dump in a file, for the linux device (ota_linux.h): what ESP-IDF's flash partition is on a device. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ota_linux.h"

static ota_err_t dump_size(void *ctx, uint32_t *size) {
    const ota_linux_coredump_t *dump = ctx;
    struct stat info;
    *size = 0;
    if (stat(dump->path, &info) != 0) return errno == ENOENT ? OTA_OK : OTA_ERR_IO;
    if (info.st_size > (off_t)UINT32_MAX) return OTA_ERR_NO_SPACE;
    *size = (uint32_t)info.st_size;
    return OTA_OK;
}

static ota_err_t dump_read(void *ctx, uint32_t offset, uint8_t *data, size_t len) {
    const ota_linux_coredump_t *dump = ctx;
    int fd = open(dump->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return OTA_ERR_IO;
    ssize_t n = pread(fd, data, len, (off_t)offset);
    close(fd);
    return n == (ssize_t)len ? OTA_OK : OTA_ERR_IO;
}

static ota_err_t dump_erase(void *ctx) {
    const ota_linux_coredump_t *dump = ctx;
    return unlink(dump->path) == 0 || errno == ENOENT ? OTA_OK : OTA_ERR_IO;
}

const ota_coredump_port_t *ota_linux_coredump_port(ota_linux_coredump_t *dump, const char *path) {
    dump->path = path;
    dump->port = (ota_coredump_port_t){dump, dump_size, dump_read, dump_erase};
    return &dump->port;
}
