/* The linux port's crypto port alone (libsodium): SHA-256 and Ed25519, with no other dependency. */
#ifndef OTA_LINUX_CRYPTO_H
#define OTA_LINUX_CRYPTO_H

#include "ota/ota_port.h"

/* The crypto port on libsodium; sodium_init() must have succeeded. Also what the core's unit
 * tests run their fake ports around, which is why it builds without libcurl. */
ota_crypto_port_t ota_linux_crypto_port(void);

#endif
