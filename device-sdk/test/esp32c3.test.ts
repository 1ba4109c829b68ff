import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

// The device SDK as an ESP-IDF application builds it for the ESP32-C3 (tools/compile-esp32c3.mjs):
// against ESP-IDF's headers and its generated sdkconfig.h, from ESP_IDF_HEADERS (which .ci/run
// sets) or IDF_PATH. Neither set fails here, saying so: this check never passes by not running.

const sdk = join(__dirname, '..');
const compileScript = join(sdk, 'tools', 'compile-esp32c3.mjs');

function compile(args: string[] = []) {
  return spawnSync(process.execPath, [compileScript, ...args], { encoding: 'utf8', timeout: 300_000 });
}

describe('the ESP32-C3 build', () => {
  it('compiles the core, the ESP-IDF port and the example with no warning, with and without the certificate bundle', () => {
    const result = compile();
    if (result.status !== 0) throw new Error(`compile-esp32c3 exited ${result.status}:\n${result.stderr}`);
    const report = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    // The sizes an ESP32-C3 firmware team plans with, printed with the test run.
    console.log(`ESP32-C3 sizes: ${JSON.stringify(report)}`);
    expect(report).toMatchObject({ target: 'esp32c3', warnings: 0 });
    // The eFuse reader alone may be left out, and only for the header set that lacks its headers.
    if (process.env.ESP_IDF_HEADERS?.endsWith('esp-idf-v5.5.5-esp32c3-headers.tar.gz')) {
      expect(report.not_compiled).toEqual([{ file: 'port/esp_idf/ota_esp_idf_chip.c', missing: ['hal/include/hal/efuse_hal.h', 'efuse/include/esp_efuse.h'] }]);
    } else if (!process.env.IDF_PATH) {
      expect(report.not_compiled).toEqual([]);
    }
    if (!process.env.IDF_PATH || process.env.ESP_IDF_HEADERS) {
      expect(report.configurations).toEqual(['generated', 'no certificate bundle']);
      expect(report.client_struct_bytes).toBeGreaterThan(0);
      // The example runs the client in a task of its own (the TLS handshake outgrows the main
      // task's stack), watches that task's stack, and waits at least a tick between steps.
      // (xTaskCreate is xTaskCreatePinnedToCore inlined, on a single-core chip's configuration.)
      const calls = report.example_calls as string[];
      expect(calls).toEqual(expect.arrayContaining(['uxTaskGetStackHighWaterMark', 'ota_client_wait_ticks', 'vTaskDelay']));
      expect(calls.some((name) => /^xTaskCreate(PinnedToCore)?$/.test(name))).toBe(true);
    }
  });

  it('refuses ESP-IDF releases outside the supported range at the first line, with the reason', () => {
    if (!process.env.ESP_IDF_HEADERS) throw new Error('ESP_IDF_HEADERS is not set: the supported range cannot be compiled against');
    for (const [version, reason] of [
      ['5.4.1', /needs ESP-IDF 5\.4\.2 or later/],
      ['6.0.0', /ESP-IDF 6 has no mbedtls\/sha256\.h/],
    ] as const) {
      const result = compile(['--as-idf-version', version]);
      expect({ version, status: result.status }).toEqual({ version, status: 1 });
      expect(result.stderr).toMatch(reason);
    }
    for (const version of ['5.4.2', '5.5.5']) expect({ version, status: compile(['--as-idf-version', version]).status }).toEqual({ version, status: 0 });
  });
});

describe('the component as a team adds it', () => {
  it('states the same ESP-IDF range as the port enforces', () => {
    const manifest = parse(readFileSync(join(sdk, 'idf_component.yml'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies.idf).toBe('>=5.4.2,<6.0');
  });

  it('has an example whose partition table fits its flash, that names its own target and pins a key it requires', () => {
    const defaults = readFileSync(join(sdk, 'examples', 'esp_idf', 'sdkconfig.defaults'), 'utf8');
    // The two-OTA table takes 3.1 MB; ESP-IDF's default flash is 2 MB.
    if (/^CONFIG_PARTITION_TABLE_TWO_OTA=y$/m.test(defaults)) expect(defaults).toMatch(/^CONFIG_ESPTOOLPY_FLASHSIZE_(4|8|16|32)MB=y$/m);
    const main = readFileSync(join(sdk, 'examples', 'esp_idf', 'main', 'main.c'), 'utf8');
    expect(main).toMatch(/\.chip_family = CONFIG_IDF_TARGET\b/);
    expect(main).not.toMatch(/"esp32[a-z0-9]*"\s*,/);
    expect(main).toMatch(/\.require_signature = true/);
    expect(main).not.toMatch(/\{\{0\}\}/);
  });

  it('passes no 64-bit conversion to printf anywhere on the device (newlib-nano prints "ld" for %lld)', () => {
    const deviceSources = ['src', 'include', 'port/esp_idf', 'port/sodium', 'examples/esp_idf'].flatMap((dir) => filesUnder(join(sdk, dir)));
    const conversions = /%[-+ #0]*\d*(?:\.\d+)?(?:ll|j|I64)[diouxX]|PRI[diouxX](?:64|MAX)/;
    const offending = deviceSources.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, index) => ({ at: `${file.slice(sdk.length + 1)}:${index + 1}`, line }))
        .filter(({ line }) => conversions.test(line)),
    );
    expect(offending).toEqual([]);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return /\.[ch]$/.test(name) ? [path] : [];
  });
}
