/*
 * Fake ports for the core's unit tests: a scripted server (check, status, download), flash whose
 * writes are lost by a power cut unless flushed, a bootloader with trial boots, a saved record,
 * and a clock the tests move. Power cuts can be placed at any byte of a download or before any
 * write that must survive one (a save, a flush, a boot switch).
 */
#ifndef FAKE_PORTS_H
#define FAKE_PORTS_H

#include <limits.h>

#include "ota/ota_client.h"

#define FAKE_SLOT_BYTES (64 * 1024)
#define FAKE_MAX_REPORTS 64

typedef struct {
    char event[24];
    char reason[40];
    char deployment[40];
    char detail[120];             /* the report's detail object as sent; empty without one */
    long long build;
} fake_report_t;

/* The deployment of every offer the fake server makes. */
#define FAKE_DEPLOYMENT_ID "d0d0d0d0-0000-4000-8000-000000000001"

typedef struct {
    /* The server */
    const uint8_t *image;         /* the offered build's bytes */
    size_t image_size;
    /* A delta patch to the build, offered to a check that says it applies patches from this base */
    const uint8_t *patch;         /* NULL: none */
    size_t patch_size;
    uint8_t patch_base_sha256[32];
    int patch_gone;               /* the patch's URL answers 404 */
    int patch_offers_left;        /* offers that carry the patch before it is dropped from them; -1: every one */
    int patch_gets;               /* GETs of the patch */
    char last_current_hash[65];   /* the last check's current_hash; empty when it sent none */
    int last_check_delta_formats; /* the last check said it applies detools-sequential-heatshrink-8-7 */
    long long last_utc_offset;    /* the last check's utc_offset_minutes; LLONG_MIN when it sent none */
    long long last_chip_revision; /* the last check's chip_revision; LLONG_MIN when it sent none */
    long long last_secure_version; /* the last check's secure_version; LLONG_MIN when it sent none */
    char last_health[256];        /* the last check's health object as sent; empty when it sent none */
    long long build;              /* 0: nothing offered */
    char signature_b64[100];      /* empty: unsigned */
    int url_version;              /* URLs of older versions are refused 403 (expired) */
    int check_failures_left;      /* checks answered 503 with Retry-After check_retry_after_s */
    uint32_t check_retry_after_s; /* 7 unless a test sets it */
    int status_failures_left;     /* reports answered 503 */
    int get_failures_left;        /* GETs that fail to connect */
    int get_unavailable_left;     /* GETs answered 503 with Retry-After get_retry_after_s (an outage) */
    uint32_t get_retry_after_s;
    int ignore_ranges;            /* answer 200 with the whole build to every GET */
    int omit_content_length;      /* a 200 says no Content-Length (a chunked answer) */
    const char *etag;             /* the ETag answered (object storage's MD5); NULL: the build's SHA-256 in quotes */
    long cut_link_at;             /* the connection breaks once this many bytes of the image were sent; -1: never */
    long cut_power_at;            /* the power goes once this many bytes of the image were sent; -1: never */
    long tamper_at;               /* this byte of the image is flipped on the wire; -1: never */
    long expire_url_at;           /* the URL expires once this many bytes were sent; -1: never */
    /* Whether the offer stands (POST /api/v1/ota/offer/) */
    long stop_after;              /* once this many image bytes were sent, the offer no longer stands; -1: it always does */
    const char *stop_status;      /* why: "deployment_paused" (held), "deployment_cancelled", ... */
    int stop_hold;                /* the answer's `hold` */
    int offer_route_missing;      /* a server from before the question: 404 */
    int offer_failures_left;      /* asks answered 503 */
    int offer_refused;            /* asks answered 401 (the token was revoked) */
    int refuse_stopped_downloads; /* the download URL is bound to the offer: 409 (held) or 410 once it no longer stands */
    int asks;                     /* asks answered */
    long delivered_at_stop;       /* `delivered` when the first ask was told the offer no longer stands; -1: none was */
    fake_report_t reports[FAKE_MAX_REPORTS];
    int report_count;
    long delivered;               /* image bytes sent over every GET */
    long last_range_start;
    int gets;
    /* The open GET */
    int get_open;
    long position;
    const uint8_t *body;          /* what it serves: the image, or the patch */
    size_t body_size;
    /* Flash: what a power cut keeps (durable) and what the device sees (live) */
    uint8_t slot_live[2][FAKE_SLOT_BYTES];
    uint8_t slot_durable[2][FAKE_SLOT_BYTES];
    unsigned active, previous, trial, attempts, max_trial_boots;
    int mark_valid_failures_left; /* marking the trial valid fails (the flash write of otadata) */
    int rollback_failures_left;   /* the switch back to the previous image fails */
    int slot_appends;             /* as esp_ota_write: writes continue from where the slot was opened; another offset is refused;
                                     and as NOR flash written at once and sequentially: a write survives a
                                     power cut without a flush, a sector is erased only once the
                                     write reaches its start, a write clears bits (ANDs), so bytes a resume
                                     inside a sector writes again over bytes a cut left go wrong */
    uint32_t slot_next;           /* with slot_appends: where the next write must land */
    long slot_bytes_read;         /* bytes read back from the slots, in all */
    long running_bytes_read;      /* bytes read from the running slot (a patch's base) */
    int resumes_inside_a_sector;  /* opens that resumed a slot at an offset inside a flash sector: on an
                                     encrypted flash (16-byte blocks) or a part that may not program a
                                     byte twice, a resume there is not safe */
    uint8_t record[1024];
    size_t record_len;
    /* Power */
    long mutations;               /* writes that must survive a power cut, so far */
    long cut_power_at_mutation;   /* the power goes instead of this write; -1: never */
    int powered_off;
    int reboot_requested;
    /* Clock */
    uint64_t now;
    uint32_t seed;
    ota_ports_t ports;
} fake_world_t;

/* A device that runs build `running_build` from slot 0, with nothing offered. */
void fake_world_init(fake_world_t *world);

/* True once the offer no longer stands (stop_after). */
int fake_offer_stopped(const fake_world_t *w);

/* Power comes back or the device restarted: unflushed writes are gone, the bootloader runs. */
void fake_reboot(fake_world_t *world);

#endif
