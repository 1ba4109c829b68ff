# AddressSanitizer and UndefinedBehaviorSanitizer for every target of the SDK (OTA_SANITIZE=ON).
# Any report ends the program with a failure, so a test that trips one fails.
set(OTA_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_compile_options(${OTA_SANITIZE_FLAGS})
add_link_options(-fsanitize=address,undefined)
