#!/usr/bin/env node
// Compiles the device SDK as an ESP-IDF application compiles it for the ESP32-C3 (a RISC-V rv32imc
// chip): the portable core, the delta applier, the ESP-IDF port, the libsodium Ed25519 check and the example's main,
// with Debian's riscv64-unknown-elf-gcc and picolibc, against ESP-IDF's own headers and an
// sdkconfig.h that ESP-IDF generated. Warnings are errors, with the warning set of the linux build.
// It compiles; it does not link (that needs Espressif's toolchain and C library).
//
// Where ESP-IDF's headers come from (device-sdk/README.md, "ESP-IDF"):
//   ESP_IDF_HEADERS  a header tree (or its .tar.gz) laid out as esp-idf/components/…,
//                    espressif__libsodium/… and config/sdkconfig.h;
//   IDF_PATH         a real ESP-IDF checkout: then ESP-IDF's own build compiles the example
//                    (idf.py, with the toolchain the checkout installed).
// Prints one JSON line: the configurations compiled and the ESP32-C3 sizes. Exits non-zero, naming
// the cause, when a source does not compile or the headers cannot be had.
//
// `--arduino-library DIR` compiles the Arduino library that tools/arduino-library.mjs laid out in
// DIR as Arduino-ESP32 compiles a library: every source under src/, with src/ on the include path,
// against an sdkconfig.h without this component's Kconfig options (Arduino-ESP32's is prebuilt);
// and a C++ translation unit, as a sketch is, whose calls must name the C functions.
//
// `--as-idf-version X.Y.Z` compiles the ESP-IDF port alone as if the headers were ESP-IDF X.Y.Z's
// (esp_idf_version.h says so): how the tests show that a release outside the supported range is
// refused at its first line with the reason.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(sdk, '..');
const outDir = join(root, '.build', 'esp32c3');

const CC = 'riscv64-unknown-elf-gcc';
const CXX = 'riscv64-unknown-elf-g++';
const TARGET_FLAGS = ['-march=rv32imc_zicsr_zifencei', '-mabi=ilp32', '-specs=picolibc.specs'];
// As ESP-IDF v5.5's CMake defines them for every source of an application.
const IDF_DEFINES = ['-DESP_PLATFORM', '-DIDF_VER="v5.5.5"', '-DMBEDTLS_CONFIG_FILE="mbedtls/esp_config.h"', '-DSOC_MMU_PAGE_SIZE=CONFIG_MMU_PAGE_SIZE', '-DSOC_XTAL_FREQ_MHZ=CONFIG_XTAL_FREQ', '-D_GNU_SOURCE'];
// The linux build's warning set (device-sdk/CMakeLists.txt), and ESP-IDF's code generation flags.
const WARNINGS = ['-Wall', '-Wextra', '-Werror', '-Wshadow', '-Wstrict-prototypes', '-Wmissing-prototypes', '-Wformat=2'];
const CODEGEN = ['-std=gnu17', '-Os', '-ffunction-sections', '-fdata-sections', '-fno-jump-tables', '-fno-tree-switch-conversion', '-fstrict-volatile-bitfields'];

// The include directories ESP-IDF gives the components the port requires (component.cmake:
// esp_http_client, app_update, nvs_flash, mbedtls, esp_timer, esp_system) and what they pull in,
// relative to esp-idf/components/. The example also includes FreeRTOS and nvs_flash.
const IDF_INCLUDES = [
  'newlib/platform_include',
  'freertos/config/include', 'freertos/config/include/freertos', 'freertos/config/riscv/include',
  'freertos/FreeRTOS-Kernel/include', 'freertos/FreeRTOS-Kernel/portable/riscv/include',
  'freertos/FreeRTOS-Kernel/portable/riscv/include/freertos', 'freertos/esp_additions/include',
  'esp_hw_support/include', 'esp_hw_support/include/soc', 'esp_hw_support/include/soc/esp32c3',
  'esp_hw_support/dma/include', 'esp_hw_support/ldo/include', 'esp_hw_support/debug_probe/include',
  'esp_hw_support/mspi_timing_tuning/include', 'esp_hw_support/power_supply/include',
  'esp_hw_support/port/esp32c3', 'esp_hw_support/port/esp32c3/include',
  'heap/include', 'heap/tlsf', 'log/include',
  'soc/include', 'soc/esp32c3', 'soc/esp32c3/include', 'soc/esp32c3/register',
  'hal/platform_port/include', 'hal/esp32c3/include', 'hal/include',
  'esp_rom/include', 'esp_rom/esp32c3/include', 'esp_rom/esp32c3/include/esp32c3', 'esp_rom/esp32c3',
  'esp_common/include', 'esp_system/include', 'esp_system/port/soc', 'esp_system/port/include/riscv', 'esp_system/port/include/private',
  'riscv/include',
  'lwip/include', 'lwip/include/apps', 'lwip/include/apps/sntp', 'lwip/lwip/src/include', 'lwip/port/include',
  'lwip/port/freertos/include', 'lwip/port/esp32xx/include', 'lwip/port/esp32xx/include/arch', 'lwip/port/esp32xx/include/sys',
  'esp_http_client/include', 'esp_event/include', 'app_update/include',
  'bootloader_support/include', 'bootloader_support/bootloader_flash/include',
  'esp_app_format/include', 'esp_bootloader_format/include', 'esp_partition/include', 'nvs_flash/include',
  'mbedtls/port/include', 'mbedtls/mbedtls/include', 'mbedtls/mbedtls/library', 'mbedtls/esp_crt_bundle/include',
  'mbedtls/mbedtls/3rdparty/everest/include', 'mbedtls/mbedtls/3rdparty/p256-m', 'mbedtls/mbedtls/3rdparty/p256-m/p256-m',
  'esp_timer/include',
  'efuse/include', 'efuse/esp32c3/include', 'efuse/esp32c3/private_include',
];
// The eFuse headers port/esp_idf/ota_esp_idf_chip.c includes. The ESP32-C3 header set laid beside
// CI's clone (../shared/esp-idf) was cut to what the port included before it, and lacks them: a
// source that needs them is compiled when the tree has them, and otherwise named in the report's
// `not_compiled` with what it lacks (the test holds that list to this one file).
const EFUSE_HEADERS = ['hal/include/hal/efuse_hal.h', 'efuse/include/esp_efuse.h'];
const LIBSODIUM_INCLUDES = ['port_include', 'libsodium/src/libsodium/include'];

const SOURCES = [
  { file: 'src/ota_client.c', part: 'core' },
  { file: 'src/ota_record.c', part: 'core' },
  { file: 'src/json_scan.c', part: 'core' },
  { file: 'src/ota_health.c', part: 'core' },
  { file: 'src/ota_coredump.c', part: 'core' },
  { file: 'src/ota_delta.c', part: 'delta' },
  { file: 'port/esp_idf/ota_esp_idf.c', part: 'port' },
  { file: 'port/esp_idf/ota_esp_idf_chip.c', part: 'port', needs: EFUSE_HEADERS },
  { file: 'port/esp_idf/ota_esp_idf_coredump.c', part: 'port' },
  { file: 'port/sodium/ota_sodium_ed25519.c', part: 'port' },
  { file: 'examples/esp_idf/main/main.c', part: 'example' },
];
const OWN_INCLUDES = ['include', 'port/esp_idf/include', 'src', 'port/sodium'].map((dir) => `-I${join(sdk, dir)}`);

function fail(message) {
  process.stderr.write(`compile-esp32c3: ${message}\n`);
  process.exit(1);
}

function run(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error) fail(`${command} could not be started: ${result.error.message}`);
  return result;
}

/** The header tree: ESP_IDF_HEADERS as a directory, or its tarball unpacked once under .build/. */
function headerTree(source) {
  if (!existsSync(source)) fail(`ESP_IDF_HEADERS=${source} does not exist`);
  if (statSync(source).isDirectory()) return source;
  const unpacked = join(root, '.build', 'esp-idf-headers');
  const stamp = join(unpacked, '.source');
  const fingerprint = `${source} ${statSync(source).size} ${statSync(source).mtimeMs}`;
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== fingerprint) {
    rmSync(unpacked, { recursive: true, force: true });
    mkdirSync(unpacked, { recursive: true });
    const tar = run('tar', ['-xzf', source, '-C', unpacked]);
    if (tar.status !== 0) fail(`unpacking ${source} failed: ${tar.stderr}`);
    writeFileSync(stamp, fingerprint);
  }
  return unpacked;
}

/**
 * The configurations compiled: the generated sdkconfig.h as it is, and the same with the
 * certificate bundle turned off (a team that pins its server's CA does that), where ESP-IDF's
 * mbedtls component no longer offers the bundle's include directory.
 */
function configurations(tree) {
  const generated = join(tree, 'config', 'sdkconfig.h');
  if (!existsSync(generated)) fail(`${generated} is missing: the header tree must hold ESP-IDF's generated config/sdkconfig.h`);
  const noBundleDir = join(outDir, 'config-no-bundle');
  mkdirSync(noBundleDir, { recursive: true });
  const withoutBundle = readFileSync(generated, 'utf8')
    .split('\n')
    .filter((line) => !/^#define CONFIG_MBEDTLS_CERTIFICATE_BUNDLE\b/.test(line))
    .join('\n');
  writeFileSync(join(noBundleDir, 'sdkconfig.h'), withoutBundle);
  return [
    { name: 'generated', configDir: join(tree, 'config'), without: [] },
    { name: 'no certificate bundle', configDir: noBundleDir, without: ['mbedtls/esp_crt_bundle/include'] },
  ];
}

/** The size in bytes of the struct `type` on the target, read from a probe object's symbol table. */
function sizeOnTarget(flags, type, header) {
  const probe = join(outDir, 'size-probe.c');
  writeFileSync(probe, `#include "${header}"\nconst unsigned char ota_size_probe[sizeof(${type})] = {0};\n`);
  const object = join(outDir, 'size-probe.o');
  const compiled = run(CC, [...flags, '-c', probe, '-o', object]);
  if (compiled.status !== 0) fail(`the size probe for ${type} did not compile:\n${compiled.stderr}`);
  const symbols = run('riscv64-unknown-elf-nm', ['-S', object]).stdout;
  const line = symbols.split('\n').find((entry) => entry.endsWith(' ota_size_probe'));
  if (!line) fail(`no size for ${type} in ${object}`);
  return parseInt(line.trim().split(/\s+/)[1], 16);
}

/** text, data and bss of the objects, as riscv64-unknown-elf-size counts them. */
function codeSize(objects) {
  const result = run('riscv64-unknown-elf-size', ['--totals', ...objects]);
  if (result.status !== 0) fail(`size failed: ${result.stderr}`);
  const totals = result.stdout.trim().split('\n').at(-1).trim().split(/\s+/).map(Number);
  return { text: totals[0], data: totals[1], bss: totals[2] };
}

/** An esp_idf_version.h that names `version`, in a directory searched before ESP-IDF's own. */
function versionOverride(version) {
  const [major, minor, patch] = version.split('.').map(Number);
  if ([major, minor, patch].some((part) => !Number.isInteger(part))) fail(`--as-idf-version takes X.Y.Z, not ${version}`);
  const dir = join(outDir, `idf-version-${version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'esp_idf_version.h'),
    [
      '#pragma once',
      `#define ESP_IDF_VERSION_MAJOR ${major}`,
      `#define ESP_IDF_VERSION_MINOR ${minor}`,
      `#define ESP_IDF_VERSION_PATCH ${patch}`,
      '#define ESP_IDF_VERSION_VAL(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))',
      '#define ESP_IDF_VERSION ESP_IDF_VERSION_VAL(ESP_IDF_VERSION_MAJOR, ESP_IDF_VERSION_MINOR, ESP_IDF_VERSION_PATCH)',
      '',
    ].join('\n'),
  );
  return dir;
}

function compileWithHeaders(tree, asVersion) {
  const idf = join(tree, 'esp-idf', 'components');
  const sodium = join(tree, 'espressif__libsodium');
  if (!existsSync(idf)) fail(`${idf} is missing: ESP_IDF_HEADERS must hold esp-idf/components/`);
  const compiled = [];
  const notCompiled = missingHeaders(idf, SOURCES);
  let sizes;
  for (const config of configurations(tree)) {
    const idfIncludes = IDF_INCLUDES.filter((dir) => !config.without.includes(dir)).map((dir) => join(idf, dir));
    const systemIncludes = [...idfIncludes, ...LIBSODIUM_INCLUDES.map((dir) => join(sodium, dir))].flatMap((dir) => ['-isystem', dir]);
    const override = asVersion ? ['-isystem', versionOverride(asVersion)] : [];
    const flags = [...TARGET_FLAGS, ...IDF_DEFINES, ...override, '-isystem', config.configDir, ...OWN_INCLUDES, ...systemIncludes, ...CODEGEN, ...WARNINGS];
    if (asVersion) {
      const result = run(CC, [...flags, '-fsyntax-only', join(sdk, 'port/esp_idf/ota_esp_idf.c')]);
      if (result.status !== 0) fail(`port/esp_idf/ota_esp_idf.c as ESP-IDF ${asVersion} did not compile:\n${result.stderr}`);
      return { target: 'esp32c3', as_idf_version: asVersion, warnings: 0 };
    }
    const objects = { core: [], delta: [], port: [], example: [] };
    for (const source of SOURCES) {
      if (notCompiled.some((entry) => entry.file === source.file)) continue;
      const object = join(outDir, config.name.replaceAll(' ', '-'), `${source.file.replaceAll('/', '_')}.o`);
      mkdirSync(dirname(object), { recursive: true });
      const result = run(CC, [...flags, '-c', join(sdk, source.file), '-o', object]);
      if (result.status !== 0 || result.stderr.trim()) fail(`${source.file} (${config.name}) did not compile cleanly:\n${result.stderr}`);
      objects[source.part].push(object);
    }
    compiled.push(config.name);
    sizes ??= {
      client_struct_bytes: sizeOnTarget(flags, 'ota_client_t', 'ota/ota_client.h'),
      port_struct_bytes: sizeOnTarget(flags, 'ota_esp_idf_t', 'ota_esp_idf.h'),
      core_code: codeSize(objects.core),
      // The delta applier (src/ota_delta.c): its whole state is the struct, no other RAM.
      delta_state_bytes: sizeOnTarget(flags, 'ota_delta_t', 'ota/ota_delta.h'),
      delta_code: codeSize(objects.delta),
      port_code: codeSize(objects.port),
      // What the example asks the linker for, among the RTOS and client calls it must make.
      example_calls: undefinedNames(objects.example).filter((name) => EXAMPLE_CALLS.includes(name)).sort(),
    };
  }
  const version = run(CC, ['--version']).stdout.split('\n')[0];
  return { target: 'esp32c3', compiler: version, headers: tree, configurations: compiled, not_compiled: notCompiled, warnings: 0, ...sizes };
}

/** The calls the example is checked for (test/esp32c3.test.ts). */
const EXAMPLE_CALLS = ['ota_client_step', 'ota_client_wait_ticks', 'uxTaskGetStackHighWaterMark', 'vTaskDelay', 'xTaskCreate', 'xTaskCreatePinnedToCore'];

/** The names the objects ask the linker for. */
function undefinedNames(objects) {
  return [...new Set(objects.flatMap((object) => run('riscv64-unknown-elf-nm', ['-u', object]).stdout.split('\n').map((line) => line.trim().split(/\s+/).at(-1)).filter(Boolean)))];
}

/** The sources whose `needs` the header tree lacks, each with the headers it lacks. */
function missingHeaders(idf, sources) {
  return sources
    .map((source) => ({ file: source.file, missing: (source.needs ?? []).filter((header) => !existsSync(join(idf, header))) }))
    .filter((entry) => entry.missing.length > 0);
}

/**
 * The Arduino library as Arduino-ESP32 builds it: its src/ only, and no OTA_CLIENT option in the
 * sdkconfig.h. Then a sketch's view: C++ calling the port and the client, whose object must ask the
 * linker for the C names.
 */
function compileArduinoLibrary(tree, library) {
  const idf = join(tree, 'esp-idf', 'components');
  const sodium = join(tree, 'espressif__libsodium');
  const source = join(library, 'src');
  if (!existsSync(source)) fail(`${source} is missing: lay the library out with tools/arduino-library.mjs`);
  const configDir = join(outDir, 'config-arduino');
  mkdirSync(configDir, { recursive: true });
  const generated = readFileSync(join(tree, 'config', 'sdkconfig.h'), 'utf8');
  writeFileSync(join(configDir, 'sdkconfig.h'), generated.split('\n').filter((line) => !/^#define CONFIG_OTA_CLIENT_/.test(line)).join('\n'));
  const systemIncludes = [...IDF_INCLUDES.map((dir) => join(idf, dir)), ...LIBSODIUM_INCLUDES.map((dir) => join(sodium, dir))].flatMap((dir) => ['-isystem', dir]);
  // Arduino-ESP32 names itself to every source it compiles.
  const arduinoDefines = ['-DARDUINO=10607', '-DARDUINO_ARCH_ESP32', '-DESP32'];
  const common = [...TARGET_FLAGS, ...IDF_DEFINES, ...arduinoDefines, '-isystem', configDir, `-I${source}`, ...systemIncludes, '-Os', '-ffunction-sections', '-fdata-sections'];
  const objectDir = join(outDir, 'arduino-library');
  rmSync(objectDir, { recursive: true, force: true });
  mkdirSync(objectDir, { recursive: true });
  const objects = [];
  const chipFile = basenameOf(SOURCES.find((entry) => entry.needs)?.file);
  const notCompiled = missingHeaders(idf, [{ file: `src/${chipFile}`, needs: EFUSE_HEADERS }]);
  for (const file of readdirSync(source).filter((name) => name.endsWith('.c')).sort()) {
    if (notCompiled.some((entry) => entry.file === `src/${file}`)) continue;
    const object = join(objectDir, `${file}.o`);
    const result = run(CC, [...common, '-std=gnu17', ...WARNINGS, '-c', join(source, file), '-o', object]);
    if (result.status !== 0 || result.stderr.trim()) fail(`src/${file} of the Arduino library did not compile cleanly:\n${result.stderr}`);
    objects.push(object);
  }
  const probe = join(objectDir, 'sketch-probe.cpp');
  writeFileSync(
    probe,
    [
      '#include "ota_esp_idf.h"',
      'static ota_esp_idf_t port;',
      'static ota_client_t client;',
      'void ota_sketch_probe(const ota_config_t *config);',
      'void ota_sketch_probe(const ota_config_t *config) {',
      '    if (ota_esp_idf_init(&port, nullptr) == ESP_OK) (void)ota_client_init(&client, config);',
      '}',
      '',
    ].join('\n'),
  );
  // The C warning set, less the options g++ does not take; Arduino-ESP32 compiles sketches as gnu++2b.
  const cxxWarnings = WARNINGS.filter((flag) => !['-Wstrict-prototypes', '-Wmissing-prototypes'].includes(flag));
  const probeObject = join(objectDir, 'sketch-probe.o');
  const compiled = run(CXX, [...common, '-std=gnu++2b', '-fno-exceptions', '-fno-rtti', ...cxxWarnings, '-c', probe, '-o', probeObject]);
  if (compiled.status !== 0 || compiled.stderr.trim()) fail(`a C++ sketch including ota_esp_idf.h did not compile cleanly:\n${compiled.stderr}`);
  const undefinedNames = run('riscv64-unknown-elf-nm', ['-u', probeObject]).stdout.split('\n').map((line) => line.trim().split(/\s+/).at(-1)).filter(Boolean);
  const mangled = undefinedNames.filter((name) => /^_Z.*ota_/.test(name));
  if (mangled.length) fail(`a C++ sketch asks the linker for C++ names the library does not define: ${mangled.join(', ')} (ota_esp_idf.h needs extern "C")`);
  for (const name of ['ota_esp_idf_init', 'ota_client_init']) if (!undefinedNames.includes(name)) fail(`a C++ sketch does not call ${name} by its C name: ${undefinedNames.join(', ')}`);
  return {
    target: 'esp32c3',
    arduino_library: library,
    sources: objects.length,
    not_compiled: notCompiled,
    sketch_calls: ['ota_esp_idf_init', 'ota_client_init'],
    keeps_trial: trialKeeper(objects),
    warnings: 0,
    code: codeSize(objects),
  };
}

/**
 * Which object defines Arduino-ESP32's verifyRollbackLater() (a weak default in its core answers
 * false, and initArduino() then confirms every new image before setup()), and whether the
 * definition answers true, read from its machine code: `li a0,1` then a return.
 */
function trialKeeper(objects) {
  for (const object of objects) {
    const defined = run('riscv64-unknown-elf-nm', ['--defined-only', object]).stdout.split('\n').some((line) => / T verifyRollbackLater$/.test(line));
    if (!defined) continue;
    const code = run('riscv64-unknown-elf-objdump', ['-d', '--disassemble=verifyRollbackLater', object]).stdout;
    const instructions = code.split('\n').filter((line) => /^\s+[0-9a-f]+:\t/.test(line)).map((line) => line.split('\t').slice(2).join(' ').replace(/\s+/g, ' ').trim());
    return { symbol: 'verifyRollbackLater', object: basenameOf(object), answers: /^li a0,1$/.test(instructions[0] ?? '') && /^ret\b/.test(instructions[1] ?? '') };
  }
  return null;
}

/** With a real ESP-IDF: its own build of the example, in a build directory of ours. */
function compileWithIdf(idfPath) {
  const idfPy = join(idfPath, 'tools', 'idf.py');
  if (!existsSync(idfPy)) fail(`IDF_PATH=${idfPath} has no tools/idf.py`);
  const build = join(outDir, 'idf-build');
  const example = join(sdk, 'examples', 'esp_idf');
  for (const args of [['set-target', 'esp32c3'], ['build']]) {
    const result = spawnSync('python3', [idfPy, '-C', example, '-B', build, ...args], { stdio: 'inherit' });
    if (result.status !== 0) fail(`idf.py ${args.join(' ')} failed (exit ${result.status})`);
  }
  copyFileSync(join(build, 'ota_example.bin'), join(outDir, 'ota_example.bin'));
  return { target: 'esp32c3', headers: idfPath, configurations: ['idf.py build'], warnings: 0, image_bytes: statSync(join(outDir, 'ota_example.bin')).size };
}

const libraryFlag = process.argv.indexOf('--arduino-library');
const arduinoLibrary = libraryFlag >= 0 ? resolve(process.argv[libraryFlag + 1] ?? fail('--arduino-library takes a folder')) : undefined;
const versionFlag = process.argv.indexOf('--as-idf-version');
const asVersion = versionFlag >= 0 ? process.argv[versionFlag + 1] ?? fail('--as-idf-version takes X.Y.Z') : undefined;
const headers = process.env.ESP_IDF_HEADERS;
const idfPath = process.env.IDF_PATH;
if (!headers && !idfPath) {
  fail('not compiled: neither ESP_IDF_HEADERS (a header tree or its .tar.gz) nor IDF_PATH (an ESP-IDF checkout) is set');
}
mkdirSync(outDir, { recursive: true });
if (headers) {
  if (run(CC, ['--version']).status !== 0) fail(`${CC} is not installed (Debian: gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)`);
  const tree = headerTree(resolve(headers));
  const report = arduinoLibrary ? compileArduinoLibrary(tree, arduinoLibrary) : compileWithHeaders(tree, asVersion);
  process.stdout.write(`${JSON.stringify(report)}\n`);
} else if (asVersion || arduinoLibrary) {
  fail('--as-idf-version and --arduino-library need ESP_IDF_HEADERS');
} else {
  process.stdout.write(`${JSON.stringify(compileWithIdf(idfPath))}\n`);
}

function basenameOf(path) {
  return path.split('/').at(-1);
}
