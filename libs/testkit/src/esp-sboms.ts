import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * SBOMs as Espressif's esp-idf-sbom writes them (pinned, installed into .tools/sbom-venv by
 * `npm test`): the tests lay out what an ESP-IDF build leaves behind for it (a project
 * description, the components' sbom.yml manifests, a link map and the image) and run the tool in
 * each format it writes. It reads no network: its list of excluded CVEs comes from a file here.
 */

/** A component of the build, as its sbom.yml declares it. */
export interface SbomComponentSpec {
  name: string;
  version: string;
  /** With `{}` where the version goes, as sbom.yml writes it. */
  cpe?: string;
  supplier?: string;
}

export type EspSbomFormat = 'spdx-tag-value' | 'spdx-json' | 'spdx-json-ld' | 'cyclonedx-json';
export const ESP_SBOM_FORMATS: readonly EspSbomFormat[] = ['spdx-tag-value', 'spdx-json', 'spdx-json-ld', 'cyclonedx-json'];

const rootDir = join(__dirname, '..', '..', '..');
const espIdfSbom = join(rootDir, '.tools', 'sbom-venv', 'bin', 'esp-idf-sbom');

/** The SBOM of an application `version` linking `components`, in `format`. */
export function makeEspSbom(options: { version: string; components: SbomComponentSpec[]; format: EspSbomFormat; idfVersion?: string }): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'esp-sbom-'));
  try {
    const idf = join(dir, 'esp-idf');
    const project = join(dir, 'app');
    const build = join(project, 'build');
    const [major, minor, patch] = (options.idfVersion ?? '5.5.5').split('.');
    mkdirSync(join(idf, 'tools', 'cmake'), { recursive: true });
    writeFileSync(join(idf, 'tools', 'cmake', 'version.cmake'), `set(IDF_VERSION_MAJOR ${major})\nset(IDF_VERSION_MINOR ${minor})\nset(IDF_VERSION_PATCH ${patch})\n`);
    mkdirSync(join(build, 'config'), { recursive: true });
    writeFileSync(join(build, 'config', 'sdkconfig.json'), '{}');
    writeFileSync(join(build, 'app.bin'), Buffer.alloc(256, 0x5a));
    mkdirSync(join(project, 'main'), { recursive: true });
    writeFileSync(join(project, 'main', 'sbom.yml'), `version: ${options.version}\n`);

    const info: Record<string, object> = { main: componentInfo('main', join(project, 'main'), options.components.map((component) => component.name)) };
    const mapLines = ['Archive member included to satisfy reference by file (symbol)', ''];
    for (const component of options.components) {
      const componentDir = join(idf, 'components', component.name);
      mkdirSync(componentDir, { recursive: true });
      const manifest = [`name: ${component.name}`, `version: ${component.version}`, ...(component.cpe ? [`cpe: ${component.cpe}`] : []), ...(component.supplier ? [`supplier: '${component.supplier}'`] : [])];
      writeFileSync(join(componentDir, 'sbom.yml'), `${manifest.join('\n')}\n`);
      info[component.name] = componentInfo(component.name, componentDir, []);
      mapLines.push(`esp-idf/${component.name}/lib${component.name}.a(${component.name}.o)  esp-idf/main/libmain.a(main.o) (${component.name}_init)`);
    }
    writeFileSync(join(build, 'app.map'), `${mapLines.join('\n')}\n`);
    const description = {
      version: '1.2',
      project_name: 'app',
      project_version: options.version,
      project_path: project,
      idf_path: idf,
      build_dir: build,
      app_bin: 'app.bin',
      // A compiler outside an ESP-IDF tools directory: the SBOM leaves the toolchain out, as the tool warns.
      c_compiler: '/usr/bin/riscv32-esp-elf-gcc',
      git_revision: `v${options.idfVersion ?? '5.5.5'}`,
      target: 'esp32c3',
      build_component_info: info,
    };
    writeFileSync(join(build, 'project_description.json'), JSON.stringify(description));
    writeFileSync(join(dir, 'excluded-cves.yml'), '{}\n');

    const out = join(dir, 'sbom');
    // Not --quiet: with it, esp-idf-sbom 1.5.0 writes an empty file.
    const ran = spawnSync(espIdfSbom, ['--no-color', '--no-progress', 'create', '--format', options.format, '--output-file', out, join(build, 'project_description.json')], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: dir, SBOM_EXCLUDED_CVES_FILE: join(dir, 'excluded-cves.yml') },
      timeout: 120_000,
    });
    if (ran.error) throw new Error(`esp-idf-sbom could not run (npm test installs it into .tools/sbom-venv): ${ran.error.message}`);
    if (ran.status !== 0) throw new Error(`esp-idf-sbom exited ${ran.status}: ${ran.stderr}`);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A component as ESP-IDF's build describes it in project_description.json. */
function componentInfo(name: string, dir: string, reqs: string[]): object {
  return {
    alias: `idf::${name}`,
    target: `___idf_${name}`,
    prefix: 'idf',
    dir,
    type: 'LIBRARY',
    lib: `__idf_${name}`,
    reqs,
    priv_reqs: [],
    managed_reqs: [],
    managed_priv_reqs: [],
    file: `esp-idf/${name}/lib${name}.a`,
    sources: [],
    include_dirs: [],
  };
}
