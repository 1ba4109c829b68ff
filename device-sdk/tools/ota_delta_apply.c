/*
 * ota-delta-apply: the device SDK's delta applier (src/ota_delta.c) on files, for the tests and
 * for a firmware author who wants to try a patch before a device does.
 *
 *   ota-delta-apply BASE PATCH OUT [--piece N] [--cut-every N --seed S]
 *
 * --piece N      feeds the patch N bytes at a time (default 4096), as a download hands it over;
 * --cut-every N  after every N bytes of patch fed, saves the state as a device would at a chunk
 *                boundary (a copy of the struct, the patch offset and the bytes written, the
 *                output flushed); then, at a seeded point before the next save, "loses power":
 *                the work since the save is thrown away, the output cut back to the saved length,
 *                and the apply goes on from the saved state and offset.
 * Prints one JSON line: the new image's size, the state's bytes, the cuts, and the patch bytes fed
 * again after them. Exits 1 with the applier's reason when the patch is refused or incomplete.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ota_delta.h"

typedef struct {
    FILE *base;
    FILE *out;
} files_t;

static bool read_base(void *ctx, uint32_t offset, uint8_t *out, size_t len) {
    files_t *files = ctx;
    return fseek(files->base, (long)offset, SEEK_SET) == 0 && fread(out, 1, len, files->base) == len;
}

static bool write_out(void *ctx, const uint8_t *data, size_t len) {
    files_t *files = ctx;
    return fwrite(data, 1, len, files->out) == len;
}

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *data = malloc(size > 0 ? (size_t)size : 1);
    *len = data && size >= 0 ? fread(data, 1, (size_t)size, file) : 0;
    fclose(file);
    return data;
}

/* A small seeded generator: the same seed cuts at the same bytes. */
static uint64_t next_random(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: ota-delta-apply BASE PATCH OUT [--piece N] [--cut-every N --seed S]\n");
        return 2;
    }
    size_t piece = 4096, cut_every = 0;
    uint64_t seed = 1;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--piece") == 0) piece = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--cut-every") == 0) cut_every = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[i + 1], NULL, 10);
    }
    if (piece == 0) piece = 1;
    size_t patch_len = 0;
    unsigned char *patch = read_file(argv[2], &patch_len);
    files_t files = {.base = fopen(argv[1], "rb"), .out = fopen(argv[3], "w+b")};
    if (!patch || !files.base || !files.out) {
        fprintf(stderr, "ota-delta-apply: cannot open the files\n");
        return 2;
    }
    fseek(files.base, 0, SEEK_END);
    ota_delta_io_t io = {.ctx = &files, .read_base = read_base, .write = write_out, .base_size = (uint32_t)ftell(files.base)};

    static ota_delta_t delta, saved;
    ota_delta_init(&delta);
    saved = delta;
    size_t offset = 0, saved_offset = 0, next_save = cut_every, cut_at = 0, cuts = 0, fed_again = 0;
    if (cut_every) cut_at = 1 + next_random(&seed) % cut_every;
    ota_delta_result_t result = OTA_DELTA_MORE;
    while (offset < patch_len && result == OTA_DELTA_MORE) {
        size_t len = patch_len - offset < piece ? patch_len - offset : piece;
        if (cut_every && offset + len > next_save) len = next_save - offset;
        if (cut_every && cut_at && offset < saved_offset + cut_at && offset + len > saved_offset + cut_at) len = saved_offset + cut_at - offset;
        result = ota_delta_feed(&delta, patch + offset, len, &io);
        offset += len;
        if (!cut_every || result != OTA_DELTA_MORE) continue;
        if (offset == saved_offset + cut_at) {
            /* Power lost: the state and the output go back to the last save. */
            cuts++;
            fed_again += offset - saved_offset;
            delta = saved;
            offset = saved_offset;
            fflush(files.out);
            if (fseek(files.out, (long)ota_delta_written(&delta), SEEK_SET) != 0) return 2;
            cut_at = 0; /* the next cut comes after the next save */
            continue;
        }
        if (offset == next_save) {
            fflush(files.out);
            saved = delta;
            saved_offset = offset;
            next_save += cut_every;
            cut_at = 1 + next_random(&seed) % cut_every;
        }
    }
    fflush(files.out);
    free(patch);
    if (result != OTA_DELTA_DONE) {
        fprintf(stderr, "ota-delta-apply: %s\n", result == OTA_DELTA_ERROR ? ota_delta_error(&delta) : "the patch ended before the new image");
        fclose(files.out);
        fclose(files.base);
        return 1;
    }
    long written = (long)ota_delta_written(&delta);
    fclose(files.out);
    /* What a cut left past the end of the new image goes. */
    if (truncate(argv[3], written) != 0) return 2;
    printf("{\"target_bytes\":%ld,\"state_bytes\":%zu,\"cuts\":%zu,\"patch_bytes_fed_again\":%zu}\n", written, sizeof(ota_delta_t), cuts, fed_again);
    fclose(files.base);
    return 0;
}
