/* Prints what the core keeps in RAM: the whole client is one struct the caller owns. */
#include <stdio.h>

#include "ota/ota_client.h"

int main(void) {
    printf("ota_client_t: %zu bytes (read buffer %d, request %d, response %d, URL %d, crypto states %d, record in memory %zu, delta applier %zu)\n",
           sizeof(ota_client_t), OTA_READ_BUFFER, OTA_REQUEST_MAX, OTA_RESPONSE_MAX, OTA_URL_MAX,
           OTA_CRYPTO_STATE_MAX * (1 + OTA_MAX_SIGNING_KEYS), sizeof(ota_record_t), sizeof(ota_delta_t));
    return 0;
}
