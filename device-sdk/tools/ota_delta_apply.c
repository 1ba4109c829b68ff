/*
 * ota-delta-apply: the device SDK's delta applier (src/ota_delta.c) on files, for the tests and
 * for a firmware author who wants to try a patch before a device does.
 *
 *   ota-delta-apply BASE PATCH OUT [--piece N] [--cut-every N | --pause-every N] [--seed S] [--stop-after N | --resume]
 *
 * --piece N      feeds the patch N bytes at a time (default 4096), as a download hands it over;
 * --cut-every N  after every N bytes of patch fed, saves the state as a device would at a chunk
 *                boundary (its saved form, the patch offset and the bytes written, the output
 *                flushed); then, at a seeded point before the next save, "loses power":
 *                the work since the save is thrown away, the output cut back to the saved length,
 *                and the apply goes on from the saved state and offset.
 * --pause-every N saves as the device's client does instead: at the applier's pauses, each time
 *                the new image written reaches a multiple of N (the client's chunk); --cut-every
 *                then bounds how many patch bytes after a save the seeded cut comes.
 * --stop-after N feeds N bytes of patch, then writes the saved state and the patch offset to
 *                OUT.state and stops (exit 3), as a device that loses power after a save;
 * --resume       goes on from OUT.state (written by any build of this tool: the saved form is the
 *                same on every ABI) and the OUT it left.
 * Prints one JSON line: the new image's size, the state's bytes, the cuts, and the patch bytes fed
 * again after them. Exits 1 with the applier's reason when the patch is refused or incomplete.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ota/ota_delta.h"

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
    size_t piece = 4096, cut_every = 0, stop_after = 0, pause_every = 0;
    uint64_t seed = 1;
    bool resume = false;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--resume") == 0) resume = true;
        else if (i + 1 >= argc) break;
        else if (strcmp(argv[i], "--piece") == 0) piece = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--cut-every") == 0) cut_every = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--pause-every") == 0) pause_every = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--stop-after") == 0) stop_after = strtoul(argv[++i], NULL, 10);
    }
    char state_path[4096];
    snprintf(state_path, sizeof state_path, "%s.state", argv[3]);
    if (piece == 0) piece = 1;
    size_t patch_len = 0;
    unsigned char *patch = read_file(argv[2], &patch_len);
    files_t files = {.base = fopen(argv[1], "rb"), .out = fopen(argv[3], resume ? "r+b" : "w+b")};
    if (!patch || !files.base || !files.out) {
        fprintf(stderr, "ota-delta-apply: cannot open the files\n");
        return 2;
    }
    fseek(files.base, 0, SEEK_END);
    ota_delta_io_t io = {.ctx = &files, .read_base = read_base, .write = write_out, .base_size = (uint32_t)ftell(files.base), .pause_every = (uint32_t)pause_every};

    static ota_delta_t delta;
    static uint8_t saved[OTA_DELTA_SAVED_BYTES];
    ota_delta_init(&delta);
    ota_delta_save(&delta, saved);
    size_t offset = 0, saved_offset = 0, next_save = cut_every, cut_at = 0, cuts = 0, fed_again = 0, pauses = 0, unaligned_pauses = 0;
    bool paused = false;
    if (resume) {
        /* The state and the patch offset a stopped run saved, then the output from where it stood. */
        uint8_t saved_offset_bytes[4];
        FILE *state = fopen(state_path, "rb");
        bool read = state && fread(saved, 1, sizeof saved, state) == sizeof saved && fread(saved_offset_bytes, 1, 4, state) == 4;
        if (state) fclose(state);
        if (!read || !ota_delta_load(&delta, saved)) {
            fprintf(stderr, "ota-delta-apply: %s holds no state this applier reads\n", state_path);
            free(patch);
            fclose(files.out);
            fclose(files.base);
            return 2;
        }
        offset = saved_offset = (size_t)saved_offset_bytes[0] | (size_t)saved_offset_bytes[1] << 8 | (size_t)saved_offset_bytes[2] << 16 | (size_t)saved_offset_bytes[3] << 24;
        if (fseek(files.out, (long)ota_delta_written(&delta), SEEK_SET) != 0) return 2;
        next_save = offset + cut_every;
    }
    if (cut_every) cut_at = 1 + next_random(&seed) % cut_every;
    ota_delta_result_t result = OTA_DELTA_MORE;
    while (offset < patch_len && result == OTA_DELTA_MORE) {
        /* With --pause-every the stop comes at the first pause past N, as a device's save does. */
        if (stop_after && offset >= stop_after && (!pause_every || paused)) {
            /* Power lost right after a save: the state, the offset, and the output flushed. */
            fflush(files.out);
            ota_delta_save(&delta, saved);
            uint8_t offset_bytes[4] = {(uint8_t)offset, (uint8_t)(offset >> 8), (uint8_t)(offset >> 16), (uint8_t)(offset >> 24)};
            FILE *state = fopen(state_path, "wb");
            bool written = state && fwrite(saved, 1, sizeof saved, state) == sizeof saved && fwrite(offset_bytes, 1, 4, state) == 4;
            if (state) fclose(state);
            fclose(files.out);
            fclose(files.base);
            free(patch);
            if (!written) return 2;
            printf("{\"stopped_at\":%zu}\n", offset);
            return 3;
        }
        size_t len = patch_len - offset < piece ? patch_len - offset : piece;
        if (stop_after && !pause_every && offset + len > stop_after) len = stop_after - offset;
        if (!pause_every && cut_every && offset + len > next_save) len = next_save - offset;
        if (cut_every && cut_at && offset < saved_offset + cut_at && offset + len > saved_offset + cut_at) len = saved_offset + cut_at - offset;
        size_t consumed = 0;
        result = ota_delta_feed(&delta, patch + offset, len, &io, &consumed);
        offset += consumed;
        paused = result == OTA_DELTA_PAUSED;
        if (paused) {
            result = OTA_DELTA_MORE;
            pauses++;
            if (ota_delta_written(&delta) % pause_every != 0) unaligned_pauses++;
        }
        if (!cut_every || result != OTA_DELTA_MORE) continue;
        if (!paused && offset == saved_offset + cut_at) {
            /* Power lost: the state (from its saved form, as a device reads it back) and the output
             * go back to the last save. */
            cuts++;
            fed_again += offset - saved_offset;
            if (!ota_delta_load(&delta, saved)) {
                fprintf(stderr, "ota-delta-apply: the saved state could not be read back\n");
                return 2;
            }
            offset = saved_offset;
            fflush(files.out);
            if (fseek(files.out, (long)ota_delta_written(&delta), SEEK_SET) != 0) return 2;
            cut_at = 0; /* the next cut comes after the next save */
            continue;
        }
        if (pause_every ? paused : offset == next_save) {
            fflush(files.out);
            ota_delta_save(&delta, saved);
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
    printf("{\"target_bytes\":%ld,\"state_bytes\":%zu,\"saved_state_bytes\":%u,\"cuts\":%zu,\"patch_bytes_fed_again\":%zu,\"pauses\":%zu,\"unaligned_pauses\":%zu}\n",
           written, sizeof(ota_delta_t), OTA_DELTA_SAVED_BYTES, cuts, fed_again, pauses, unaligned_pauses);
    fclose(files.base);
    return 0;
}
