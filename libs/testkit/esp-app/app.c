/*
 * A minimal ESP32-C3 application for the tests: an app descriptor where ESP-IDF puts it (the start
 * of the first flash segment), read-only data, flash code, IRAM code and DRAM data, so that
 * esptool's elf2image lays out segments as it does for a real build. Compiled by Debian's RISC-V
 * compiler with the values below set on its command line (libs/testkit/src/esp-images.ts).
 */
#include <stdint.h>

/* ESP-IDF's esp_app_desc_t (components/esp_app_format/include/esp_app_desc.h): 256 bytes. */
typedef struct {
  uint32_t magic_word;
  uint32_t secure_version;
  uint32_t reserv1[2];
  char version[32];
  char project_name[32];
  char time[16];
  char date[16];
  char idf_ver[32];
  uint8_t app_elf_sha256[32]; /* written by elf2image --elf-sha256-offset */
  uint16_t min_efuse_blk_rev_full;
  uint16_t max_efuse_blk_rev_full;
  uint8_t mmu_page_size;
  uint8_t reserv3[3];
  uint32_t reserv2[18];
} app_desc_t;

_Static_assert(sizeof(app_desc_t) == 256, "esp_app_desc_t is 256 bytes");

__attribute__((section(".flash.appdesc"), used)) const app_desc_t esp_app_desc = {
    .magic_word = APP_DESC_MAGIC,
    .secure_version = SECURE_VERSION,
    .version = APP_VERSION,
    .project_name = PROJECT_NAME,
    .time = "12:00:00",
    .date = "Dec  7 2026",
    .idf_ver = IDF_VERSION,
    .min_efuse_blk_rev_full = MIN_EFUSE_BLK_REV,
    .max_efuse_blk_rev_full = MAX_EFUSE_BLK_REV,
    .mmu_page_size = 16,
};

/* Sized on the command line, so that a test can make a larger image. */
const char lookup_table[TABLE_BYTES] = "lookup";
volatile int counter = 3;

__attribute__((section(".iram1"))) void tick(void) { counter++; }

void call_start_cpu0(void) {
  for (;;) {
    tick();
    if (lookup_table[counter % TABLE_BYTES]) counter--;
  }
}
