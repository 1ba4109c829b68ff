/* The linux port's streamed Ed25519 verification, held to libsodium's own verify. */
#include <string.h>

#include <sodium.h>

#include "ota_linux_crypto.h"
#include "test_support.h"

void crypto_tests(void);

static bool streamed_verify(const ota_crypto_port_t *crypto, const uint8_t *message, size_t len, const uint8_t signature[64], const uint8_t key[32],
                            size_t piece) {
    _Alignas(16) uint8_t state[OTA_CRYPTO_STATE_MAX];
    crypto->ed25519_init(state, signature, key);
    for (size_t at = 0; at < len; at += piece) crypto->ed25519_update(state, message + at, len - at < piece ? len - at : piece);
    return crypto->ed25519_final(state, signature, key);
}

void crypto_tests(void) {
    ota_crypto_port_t crypto = ota_linux_crypto_port();
    EXPECT("the states fit the core's buffers", crypto.sha256_state_size <= OTA_CRYPTO_STATE_MAX && crypto.ed25519_state_size <= OTA_CRYPTO_STATE_MAX);
    uint8_t public_key[32], secret_key[64], other_public[32], other_secret[64], signature[64];
    static uint8_t message[5000];
    int agree = 1, valid = 1, tampered_refused = 1;
    for (int round = 0; round < 50; round++) {
        crypto_sign_keypair(public_key, secret_key);
        crypto_sign_keypair(other_public, other_secret);
        size_t len = (size_t)round * 97 % sizeof message;
        randombytes_buf(message, len);
        crypto_sign_detached(signature, NULL, message, len, secret_key);
        bool ours = streamed_verify(&crypto, message, len, signature, public_key, 1 + (size_t)round * 13);
        agree &= ours == (crypto_sign_verify_detached(signature, message, len, public_key) == 0);
        valid &= ours;
        uint8_t bad[64];
        memcpy(bad, signature, 64);
        bad[round % 64] ^= 1;
        tampered_refused &= !streamed_verify(&crypto, message, len, bad, public_key, 64);
        tampered_refused &= !streamed_verify(&crypto, message, len, signature, other_public, 64);
        if (len > 0) {
            message[len / 2] ^= 0x80;
            tampered_refused &= !streamed_verify(&crypto, message, len, signature, public_key, 64);
        }
    }
    EXPECT("valid signatures verify, in any piece sizes", valid);
    EXPECT("the streamed verify agrees with crypto_sign_verify_detached", agree);
    EXPECT("a changed signature, key or message is refused", tampered_refused);
    /* S + L is the same point but not reduced: RFC 8032 refuses it. */
    crypto_sign_keypair(public_key, secret_key);
    crypto_sign_detached(signature, NULL, message, 100, secret_key);
    static const uint8_t order[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
    unsigned carry = 0;
    for (int i = 0; i < 32; i++) {
        unsigned sum = signature[32 + i] + order[i] + carry;
        signature[32 + i] = (uint8_t)sum;
        carry = sum >> 8;
    }
    EXPECT("a non-canonical S is refused", !streamed_verify(&crypto, message, 100, signature, public_key, 64));
}
