/*
 * The OTA client in an Arduino-ESP32 sketch (3.3 or later, built on ESP-IDF 5.5): it checks,
 * downloads with resume, verifies, installs, reboots into the new image, and confirms it once the
 * sketch's own health check passes. Choose a partition scheme with two OTA app partitions
 * (Tools > Partition Scheme, e.g. "Minimal SPIFFS (1.9MB APP with OTA)").
 */
#include <WiFi.h>
#include <sodium.h>

#include "ota_esp_idf.h"

static const char WIFI_SSID[] = "REPLACE-with-your-network";
static const char WIFI_PASSWORD[] = "REPLACE-with-its-password";

/* This image's build number as the service numbers it: what the device reports when no saved
 * state says what runs. */
static const int32_t BUILD_NUMBER = 0;

/*
 * The project's Ed25519 release key, as `public_key` of GET /api/v1/projects/{id}/signing-keys/
 * shows it (base64 of 32 bytes). With require_signature below, an offer that is unsigned, or
 * signed by any other key, is refused (signature_invalid).
 */
static const char RELEASE_PUBLIC_KEY_BASE64[] = "REPLACE-with-your-project's-signing-key";

static ota_esp_idf_t port;
static ota_client_t client;
static ota_esp_idf_chip_t chip; /* read before each step: a confirm may raise the eFuse secure version */
static uint8_t release_key[1][32];
static bool updates_on = false;
static ota_esp_idf_coredump_t dump;
static ota_coredump_sender_t sender;  /* about 5 KB: static, not on loop()'s stack */
static bool sending_dump = false;
static unsigned long dump_step_at = 0;
/* The client keeps the pointers of its configuration: what they point at lives as long as it. */
static char device_id[18];

static bool decode_release_key() {
  size_t length = 0;
  return sodium_base642bin(release_key[0], 32, RELEASE_PUBLIC_KEY_BASE64, strlen(RELEASE_PUBLIC_KEY_BASE64), NULL, &length, NULL,
                           sodium_base64_VARIANT_ORIGINAL) == 0 &&
         length == 32;
}

/* What "this image works" means for this product. */
static bool health_check_passed() {
  return WiFi.status() == WL_CONNECTED;
}

void setup() {
  Serial.begin(115200);
  WiFi.begin(WIFI_SSID, WIFI_PASSWORD);
  while (WiFi.status() != WL_CONNECTED) delay(250);
  if (!decode_release_key()) {
    /* Never update without the pinned key: a placeholder left in place stops here. */
    Serial.println("RELEASE_PUBLIC_KEY_BASE64 is not a 32-byte base64 key: updates are off");
    return;
  }
  if (ota_esp_idf_init(&port, NULL) != ESP_OK) return;
  /* Static: the core dump sender reads it after setup() returns. */
  static ota_config_t config = {};
  config.server_url = "https://ota.example.com";
  config.token = "ota_prj_...";           /* a project token of `device` scope */
  snprintf(device_id, sizeof device_id, "%s", WiFi.macAddress().c_str());
  config.device_id = device_id;
  config.framework = "arduino";
  config.chip_family = CONFIG_IDF_TARGET; /* the target this sketch was built for: esp32c3, esp32s3, ... */
  config.nvs_schema_version = -1;
  config.factory_build_number = BUILD_NUMBER;
  config.signing_keys = (const uint8_t(*)[32])release_key;
  config.signing_key_count = 1;
  config.require_signature = true;
  config.apply_deltas = true;             /* delta patches, from the first update it installed on */
  /* What the bootloader checks, so that no build it would refuse is offered: the chip revision,
   * and the eFuse anti-rollback version when anti-rollback is on. */
  ota_esp_idf_chip_read(&chip);
  config.chip_revision = &chip.revision;
#if CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK
  config.secure_version = &chip.secure_version;
#endif
  config.ports = &port.ports;
  updates_on = ota_client_init(&client, &config) == OTA_OK;
  /* The core dump of the last panic, if the flash holds one, goes to the service a piece a loop()
   * and is erased once the service has it whole (ota/ota_coredump.h). */
  sending_dump = updates_on && ota_coredump_begin(&sender, &config, ota_esp_idf_coredump_port(&dump)) == OTA_OK &&
                 ota_coredump_outcome(&sender) == OTA_COREDUMP_PENDING;
}

void loop() {
  if (!updates_on) {
    delay(1000);
    return;
  }
  uint32_t wait_ms = 0;
  /* One step is bounded in work and in blocking time (ota/ota_client.h), so loop() keeps the
   * task watchdog fed. */
  ota_esp_idf_chip_read(&chip);
  ota_client_step(&client, &wait_ms);
  if (ota_client_in_trial(&client) && health_check_passed()) ota_client_confirm(&client);
  if (sending_dump && millis() >= dump_step_at) {
    uint32_t dump_wait_ms = 0;
    sending_dump = ota_coredump_step(&sender, &dump_wait_ms) == OTA_OK && ota_coredump_outcome(&sender) == OTA_COREDUMP_PENDING;
    dump_step_at = millis() + dump_wait_ms;
    if (sending_dump && dump_wait_ms < wait_ms) wait_ms = dump_wait_ms;
  }
  delay(wait_ms < 1000 ? (wait_ms ? wait_ms : 1) : 1000);
}
