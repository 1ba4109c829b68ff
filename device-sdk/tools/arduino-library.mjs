#!/usr/bin/env node
// Makes the Arduino library of the device SDK: the same sources as the ESP-IDF component (the
// portable core, the ESP-IDF port and its Ed25519 check), laid out as the Arduino library
// specification asks (library.properties at the top, every source under src/, which Arduino puts on
// the include path, examples under examples/), with library.json for PlatformIO beside it.
//
//   node device-sdk/tools/arduino-library.mjs [--out DIR] [--pack]
//
// --out   where the library is laid out (default .build/arduino/OtaDeviceClient; emptied first);
// --pack  packs it with PlatformIO's own packer (tools/pio_pack.py, PlatformIO pinned in
//         scripts/ensure-built.mjs) twice: once as PlatformIO reads it (library.json) and once as
//         the Arduino IDE does (library.properties alone), so that both manifests are validated.
// Prints one JSON line: the library's folder, its version and each archive with its files. Exits
// non-zero, naming the cause, when the manifests disagree on the version or a packer refuses them.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(sdk, '..');

/** Where each source of the library comes from: `src/` of the library holds them all. */
const SOURCES = [
  ['include/ota/ota_client.h', 'src/ota/ota_client.h'],
  ['include/ota/ota_port.h', 'src/ota/ota_port.h'],
  ['include/ota/ota_delta.h', 'src/ota/ota_delta.h'],
  ['include/ota/ota_health.h', 'src/ota/ota_health.h'],
  ['include/ota/ota_coredump.h', 'src/ota/ota_coredump.h'],
  ['src/ota_client.c', 'src/ota_client.c'],
  ['src/ota_record.c', 'src/ota_record.c'],
  ['src/ota_delta.c', 'src/ota_delta.c'],
  ['src/ota_record.h', 'src/ota_record.h'],
  ['src/ota_chunk.h', 'src/ota_chunk.h'],
  ['src/json_scan.c', 'src/json_scan.c'],
  ['src/ota_health.c', 'src/ota_health.c'],
  ['src/ota_coredump.c', 'src/ota_coredump.c'],
  ['src/ota_internal.h', 'src/ota_internal.h'],
  ['src/json_scan.h', 'src/json_scan.h'],
  ['port/esp_idf/ota_esp_idf.c', 'src/ota_esp_idf.c'],
  ['port/esp_idf/ota_esp_idf_chip.c', 'src/ota_esp_idf_chip.c'],
  ['port/esp_idf/ota_esp_idf_coredump.c', 'src/ota_esp_idf_coredump.c'],
  ['port/esp_idf/include/ota_esp_idf.h', 'src/ota_esp_idf.h'],
  ['port/sodium/ota_sodium_ed25519.c', 'src/ota_sodium_ed25519.c'],
  ['port/sodium/ota_sodium_ed25519.h', 'src/ota_sodium_ed25519.h'],
];

function fail(message) {
  process.stderr.write(`arduino-library: ${message}\n`);
  process.exit(1);
}

/** The version each manifest states; one release has one version. */
export function manifestVersions() {
  const properties = readFileSync(join(sdk, 'arduino', 'library.properties'), 'utf8');
  const component = readFileSync(join(sdk, 'idf_component.yml'), 'utf8');
  return {
    'library.properties': /^version=(.*)$/m.exec(properties)?.[1]?.trim(),
    'library.json': JSON.parse(readFileSync(join(sdk, 'arduino', 'library.json'), 'utf8')).version,
    'idf_component.yml': /^version:\s*"?([^"\n]+)"?$/m.exec(component)?.[1]?.trim(),
  };
}

export function assembleLibrary(out) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'src', 'ota'), { recursive: true });
  for (const [from, to] of SOURCES) cpSync(join(sdk, from), join(out, to));
  for (const name of ['library.properties', 'library.json', 'examples']) cpSync(join(sdk, 'arduino', name), join(out, name), { recursive: true });
  // The Library Manager and PlatformIO's registry want the licence beside the manifests.
  cpSync(join(root, 'LICENSE'), join(out, 'LICENSE'));
  return out;
}

/** `pio pkg pack` of `dir` into `archive`: the list of files packed, or the packer's refusal. */
export function pack(dir, archive) {
  const python = join(root, '.tools', 'pio-venv', 'bin', 'python');
  if (!existsSync(python)) fail(`${python} is missing: scripts/ensure-built.mjs --device-sdk installs PlatformIO there`);
  mkdirSync(dirname(archive), { recursive: true });
  const result = spawnSync(python, [join(sdk, 'tools', 'pio_pack.py'), dir, '-o', archive], {
    encoding: 'utf8',
    // PlatformIO's own state stays under .build/, and it sends nothing anywhere.
    env: { ...process.env, PLATFORMIO_CORE_DIR: join(root, '.build', 'platformio'), PLATFORMIO_SETTING_ENABLE_TELEMETRY: 'no' },
  });
  if (result.status !== 0) return { refused: `${result.stdout}${result.stderr}`.trim().split('\n').filter((line) => /Error|error/.test(line)).join('\n') || `exit ${result.status}` };
  const listing = spawnSync('tar', ['-tzf', archive], { encoding: 'utf8' });
  return { archive, files: listing.stdout.trim().split('\n').sort() };
}

function main() {
  const outFlag = process.argv.indexOf('--out');
  const out = resolve(outFlag >= 0 ? process.argv[outFlag + 1] ?? fail('--out takes a folder') : join(root, '.build', 'arduino', 'OtaDeviceClient'));
  const versions = manifestVersions();
  if (new Set(Object.values(versions)).size !== 1) fail(`the manifests disagree on the version: ${JSON.stringify(versions)}`);
  assembleLibrary(out);
  const report = { library: out, version: versions['library.json'], archives: [] };
  if (process.argv.includes('--pack')) {
    const asPlatformIo = pack(out, join(out, '..', 'platformio.tar.gz'));
    if (asPlatformIo.refused) fail(`PlatformIO refused library.json:\n${asPlatformIo.refused}`);
    // The Arduino IDE reads library.properties only: packed without library.json, the packer
    // validates that manifest instead.
    const propertiesOnly = `${out}-properties-only`;
    rmSync(propertiesOnly, { recursive: true, force: true });
    cpSync(out, propertiesOnly, { recursive: true });
    rmSync(join(propertiesOnly, 'library.json'));
    const asArduino = pack(propertiesOnly, join(out, '..', 'arduino.tar.gz'));
    if (asArduino.refused) fail(`PlatformIO refused library.properties:\n${asArduino.refused}`);
    report.archives.push({ manifest: 'library.json', ...asPlatformIo }, { manifest: 'library.properties', ...asArduino });
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
