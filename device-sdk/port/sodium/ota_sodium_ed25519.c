#include "ota_sodium_ed25519.h"

#include <sodium.h>

/*
 * Ed25519 (RFC 8032) over a message that arrives in pieces. libsodium's verify wants the whole
 * message in memory, which an image is not; but the only pass over the message is the SHA-512 of
 * R || A || M, so that hash is streamed and the group equation [S]B = R + [k]A is checked with
 * libsodium's point operations at the end. The unit tests hold it to crypto_sign_verify_detached.
 * The state is a crypto_hash_sha512_state.
 */
void ota_sodium_ed25519_init(void *state, const uint8_t signature[64], const uint8_t public_key[32]) {
    crypto_hash_sha512_init(state);
    crypto_hash_sha512_update(state, signature, 32);
    crypto_hash_sha512_update(state, public_key, 32);
}

void ota_sodium_ed25519_update(void *state, const uint8_t *data, size_t len) {
    crypto_hash_sha512_update(state, data, len);
}

/* S < L, the group order: RFC 8032 refuses a signature whose S is not reduced. */
static bool scalar_is_canonical(const uint8_t s[32]) {
    static const uint8_t order[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
    for (int i = 31; i >= 0; i--) {
        if (s[i] < order[i]) return true;
        if (s[i] > order[i]) return false;
    }
    return false;
}

bool ota_sodium_ed25519_final(void *state, const uint8_t signature[64], const uint8_t public_key[32]) {
    uint8_t hash[64], k[32], s_b[32], k_a[32], sum[32];
    crypto_hash_sha512_final(state, hash);
    crypto_core_ed25519_scalar_reduce(k, hash);
    const uint8_t *r = signature;
    const uint8_t *s = signature + 32;
    if (!scalar_is_canonical(s) || !crypto_core_ed25519_is_valid_point(public_key)) return false;
    if (crypto_scalarmult_ed25519_base_noclamp(s_b, s) != 0) return false;
    if (crypto_scalarmult_ed25519_noclamp(k_a, k, public_key) != 0) return false;
    if (crypto_core_ed25519_add(sum, r, k_a) != 0) return false;
    return sodium_memcmp(sum, s_b, sizeof sum) == 0;
}
