/* Ed25519 verification over a streamed message, on libsodium: the linux and ESP-IDF ports' crypto. */
#ifndef OTA_SODIUM_ED25519_H
#define OTA_SODIUM_ED25519_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The state is a crypto_hash_sha512_state (ota_crypto_port_t.ed25519_state_size). */
void ota_sodium_ed25519_init(void *state, const uint8_t signature[64], const uint8_t public_key[32]);
void ota_sodium_ed25519_update(void *state, const uint8_t *data, size_t len);
bool ota_sodium_ed25519_final(void *state, const uint8_t signature[64], const uint8_t public_key[32]);

#endif
