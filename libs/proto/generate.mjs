// Regenerates src/gen from ../../proto with buf and the ts-proto plugin of this package.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, 'node_modules', '.bin');
rmSync(join(here, 'src', 'gen'), { recursive: true, force: true });
const result = spawnSync(join(bin, 'buf'), ['generate', '--template', 'buf.gen.yaml'], {
  cwd: here,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}` },
});
process.exit(result.status ?? 1);
