# The SDK as an ESP-IDF component: the portable core, the ESP-IDF port and the shared libsodium
# Ed25519 check. Included from the top CMakeLists.txt when ESP_PLATFORM is set.
idf_component_register(
  SRCS
    "${CMAKE_CURRENT_LIST_DIR}/../../src/ota_client.c"
    "${CMAKE_CURRENT_LIST_DIR}/../../src/ota_record.c"
    "${CMAKE_CURRENT_LIST_DIR}/../../src/ota_delta.c"
    "${CMAKE_CURRENT_LIST_DIR}/../../src/json_scan.c"
    "${CMAKE_CURRENT_LIST_DIR}/../../src/ota_health.c"
    "${CMAKE_CURRENT_LIST_DIR}/../../src/ota_coredump.c"
    "${CMAKE_CURRENT_LIST_DIR}/ota_esp_idf.c"
    "${CMAKE_CURRENT_LIST_DIR}/ota_esp_idf_coredump.c"
    "${CMAKE_CURRENT_LIST_DIR}/ota_esp_idf_chip.c"
    "${CMAKE_CURRENT_LIST_DIR}/../sodium/ota_sodium_ed25519.c"
  INCLUDE_DIRS
    "${CMAKE_CURRENT_LIST_DIR}/../../include"
    "${CMAKE_CURRENT_LIST_DIR}/include"
  PRIV_INCLUDE_DIRS
    "${CMAKE_CURRENT_LIST_DIR}/../../src"
    "${CMAKE_CURRENT_LIST_DIR}/../sodium"
  REQUIRES esp_http_client app_update nvs_flash mbedtls esp_timer esp_partition
  # espcoredump: the core dump's image functions, read by ota_esp_idf_coredump.c.
  PRIV_REQUIRES esp_system efuse hal espcoredump)
