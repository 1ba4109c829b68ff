/* What the linux port's files share; not part of the SDK's interface. */
#ifndef OTA_LINUX_INTERNAL_H
#define OTA_LINUX_INTERNAL_H

#include "ota_linux.h"

void ota_linux_http_bind(ota_linux_t *port);
void ota_linux_http_close(ota_linux_t *port);
void ota_linux_flash_bind(ota_linux_t *port);
int ota_linux_boot(ota_linux_t *port);

/* Replaces dir/name with `len` bytes: a new copy, synced, renamed over the old, the directory synced. */
int ota_linux_replace_file(const char *dir, const char *name, const void *data, size_t len);

#endif
