/* What the core's modules share and the application does not see. */
#ifndef OTA_INTERNAL_H
#define OTA_INTERNAL_H

#include <stdarg.h>

#include "ota/ota_client.h"

/* The delay before retry number `failures` (1, 2, ...) under the config's retry timing, or the
 * server's Retry-After when it sent one (ota_client.c). */
uint32_t ota_backoff_ms(const ota_config_t *config, uint32_t failures, uint32_t retry_after_s);

/* One line of log through the config's system port, when it has a log (at most 191 characters). */
void ota_vlog(const ota_config_t *config, ota_log_level_t level, const char *format, va_list args);

#endif
