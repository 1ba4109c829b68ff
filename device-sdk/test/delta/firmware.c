/*
 * A firmware image for the delta tests: the device SDK's own core, linked for a RISC-V chip with
 * picolibc, so that the patches are made and applied between real machine-code images. Each
 * FIRMWARE_VERSION is a release of it:
 *   1  the base;
 *   2  one line added at the start of main: everything after it moves, as a one-line change in
 *      real firmware moves the code behind it;
 *   3  version 2 with a changed constant and a changed message: a small fix.
 */
#include <stdio.h>

#include "ota/ota_client.h"
#include "ota/ota_delta.h"

#ifndef FIRMWARE_VERSION
#define FIRMWARE_VERSION 1
#endif

#if FIRMWARE_VERSION >= 3
#define POLL_INTERVAL_S 900
#define GREETING "firmware with the poll fix"
#else
#define POLL_INTERVAL_S 1800
#define GREETING "firmware"
#endif

static ota_client_t client;
static ota_delta_t delta;

int main(void) {
#if FIRMWARE_VERSION >= 2
    printf("booting %s %d\n", GREETING, FIRMWARE_VERSION);
#endif
    ota_config_t config = {.poll_interval_s = POLL_INTERVAL_S};
    printf("client: %d\n", (int)ota_client_init(&client, &config));
    ota_delta_init(&delta);
    printf("delta state: %u bytes\n", (unsigned)sizeof delta);
    return 0;
}
