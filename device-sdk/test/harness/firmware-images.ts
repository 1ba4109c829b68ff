import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const sdk = join(__dirname, '..', '..');

/**
 * Release `version` of the delta tests' firmware (test/delta/firmware.c: the SDK's own core, linked
 * for a RISC-V chip with picolibc by Debian's cross compiler) as a binary image in `dir`.
 */
export function firmwareImage(dir: string, version: number): string {
  const elf = join(dir, `firmware-${version}.elf`);
  const image = join(dir, `firmware-${version}.bin`);
  const steps: Array<[string, string[]]> = [
    [
      'riscv64-unknown-elf-gcc',
      [
        '-march=rv32imac', '-mabi=ilp32', '-specs=picolibc.specs', '--oslib=semihost', '-Os', '-ffunction-sections', '-Wl,--gc-sections',
        `-DFIRMWARE_VERSION=${version}`, `-I${join(sdk, 'include')}`, `-I${join(sdk, 'src')}`,
        join(sdk, 'test', 'delta', 'firmware.c'), ...['ota_client.c', 'ota_record.c', 'json_scan.c', 'ota_delta.c'].map((file) => join(sdk, 'src', file)),
        '-o', elf,
      ],
    ],
    ['riscv64-unknown-elf-objcopy', ['-O', 'binary', elf, image]],
  ];
  for (const [command, args] of steps) {
    const result = spawnSync(command, args, { encoding: 'utf8' });
    if (result.error || result.status !== 0) throw new Error(`${command} failed (the delta tests' firmware needs gcc-riscv64-unknown-elf and picolibc): ${result.error?.message ?? result.stderr}`);
  }
  return image;
}
