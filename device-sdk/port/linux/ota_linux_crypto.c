/* The linux port's crypto: SHA-256 and the streamed Ed25519 check, on libsodium. */
#include "ota_linux_crypto.h"

#include <sodium.h>

#include "ota_sodium_ed25519.h"

static void sha256_init(void *state) {
    crypto_hash_sha256_init(state);
}

static void sha256_update(void *state, const uint8_t *data, size_t len) {
    crypto_hash_sha256_update(state, data, len);
}

static void sha256_final(void *state, uint8_t digest[32]) {
    crypto_hash_sha256_final(state, digest);
}

ota_crypto_port_t ota_linux_crypto_port(void) {
    return (ota_crypto_port_t){
        .ctx = NULL,
        .sha256_state_size = sizeof(crypto_hash_sha256_state),
        .ed25519_state_size = sizeof(crypto_hash_sha512_state),
        .sha256_init = sha256_init,
        .sha256_update = sha256_update,
        .sha256_final = sha256_final,
        .ed25519_init = ota_sodium_ed25519_init,
        .ed25519_update = ota_sodium_ed25519_update,
        .ed25519_final = ota_sodium_ed25519_final,
    };
}
