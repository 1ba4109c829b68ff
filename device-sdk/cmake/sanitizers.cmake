# AddressSanitizer and UndefinedBehaviorSanitizer for every target of the SDK (OTA_SANITIZE=ON).
# Any report ends the program with a failure, so a test that trips one fails.
set(OTA_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  # Every frame on ASan's fake stack, so a write through a pointer to a returned function's local
  # is reported whatever ASAN_OPTIONS says (gcc 12's build finds it only with the runtime option).
  list(APPEND OTA_SANITIZE_FLAGS -fsanitize-address-use-after-return=always)
endif()
add_compile_options(${OTA_SANITIZE_FLAGS})
add_link_options(-fsanitize=address,undefined)
