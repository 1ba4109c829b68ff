import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { api, checkBody, createUser, eventually, grantRole, makeCoreDump, makeEspBuild, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

// Core dumps (docs/api.md, "Core dumps"): sent by devices in pieces, decoded by gdb with the
// build's ELF, grouped by signature. The builds are linked by Debian's RISC-V compiler with
// libs/testkit/esp-app/crash.c and made into images by esptool; their dumps are laid out as
// ESP-IDF writes them (libs/testkit/src/esp-core-dumps.ts).

const C3 = { version_label: '1.0.0', framework: 'esp_idf', chip_family: 'esp32c3' } as const;
const PIECE = 256;

let f: ProjectFixture;
const projectPath = () => `/api/v1/projects/${f.project.id}`;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** One build of the crashing application, released; answers its id, image and ELF. */
async function release(version: string) {
  const build = makeEspBuild({ crashCode: true, version });
  const created = await api('POST', `${projectPath()}/artifacts/`, { token: f.user.token, body: uploadForm({ ...C3, version_label: version }, build.image) });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, buildNumber: created.body.build_number as number, ...build };
}

const putElf = (artifactId: string, elf: Buffer) =>
  api('PUT', `${projectPath()}/artifacts/${artifactId}/elf/`, { token: f.user.token, body: elf, headers: { 'content-type': 'application/octet-stream' } });

const sendPiece = (deviceId: string, dump: Buffer, offset: number, piece = dump.subarray(offset, offset + PIECE), named = sha(dump)) =>
  api('POST', `/api/v1/ota/coredump/?device_id=${deviceId}&sha256=${named}&size=${dump.length}&offset=${offset}`, {
    token: f.deviceScopeToken,
    body: piece,
    headers: { 'content-type': 'application/octet-stream' },
  });

/** Sends the dump piece by piece, from where the service says it stands, as the device SDK does. */
async function sendDump(deviceId: string, dump: Buffer) {
  let offset = 0;
  for (;;) {
    const answer = await sendPiece(deviceId, dump, offset);
    expect(answer.status).toBe(200);
    if (answer.body.complete) return answer.body as { received: number; complete: true; crash_id: string };
    offset = answer.body.received;
  }
}

async function device(name: string) {
  const deviceId = `${name}-${randomBytes(4).toString('hex')}`;
  expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId, { chip_family: 'esp32c3' }) })).status).toBe(200);
  return deviceId;
}

const groups = async (query = '') => (await api('GET', `${projectPath()}/crashes/${query}`, { token: f.user.token })).body as Array<Record<string, any>>;
const decodedGroups = (query = '') => eventually(() => groups(query), (list) => list.length > 0 && list.every((group) => group.decoding !== 'queued'));

beforeEach(async () => {
  f = await setupProject({ name: 'crashes', maxUploadsPerMonth: 0 });
});

describe('a core dump', () => {
  it('arrives in pieces that resume after a cut, is decoded with the build\'s ELF and grouped', async () => {
    const build = await release('2.0.0');
    expect((await putElf(build.id, build.elf)).body.elf).toMatchObject({ sha256: sha(build.elf), size: build.elf.length });
    const dump = makeCoreDump({ elf: build.elf, taskName: 'sensor' });
    const unit = await device('unit');

    // Two pieces, then a cut: the device starts again from offset 0 and is told where to go on.
    expect((await sendPiece(unit, dump, 0)).body).toEqual({ received: PIECE, complete: false });
    expect((await sendPiece(unit, dump, PIECE)).body).toEqual({ received: 2 * PIECE, complete: false });
    expect((await sendPiece(unit, dump, 0)).body).toEqual({ received: 2 * PIECE, complete: false });
    const receipt = await sendDump(unit, dump);
    expect(receipt.received).toBe(dump.length);
    // Sent again whole (the device lost the answer): the same crash, nothing new.
    expect((await sendPiece(unit, dump, 0)).body).toEqual(receipt);

    const [group, ...others] = await decodedGroups();
    expect(others).toEqual([]);
    expect(group).toMatchObject({ artifact_id: build.id, build_number: build.buildNumber, reason: 'load_access_fault', decoding: 'decoded', count: 1, devices: 1 });
    expect(group!.frames.map((frame: { function: string }) => frame.function)).toEqual(['read_sensor', 'average_reading', 'sensor_task']);
    expect(group!.frames[0]).toMatchObject({ file: expect.stringMatching(/crash\.c$/), line: expect.any(Number) });

    const detail = await api('GET', `${projectPath()}/crashes/${group!.id}/`, { token: f.user.token });
    expect(detail.status).toBe(200);
    expect(detail.body.samples).toHaveLength(1);
    expect(detail.body.samples[0]).toMatchObject({ id: receipt.crash_id, device_id: unit, task: 'sensor', attribution: 'elf_sha256', chip: 'esp32c3', format_version: '1.2', sha256: sha(dump), decoding: 'decoded' });
  });

  it('groups the same crash of many devices once, and another signature apart', async () => {
    const build = await release('2.1.0');
    await putElf(build.id, build.elf);
    const units = await Promise.all(['a', 'b', 'c'].map(device));
    // Each device's dump differs (its stack below the crash), the crash does not.
    await Promise.all(units.map((unit, i) => sendDump(unit, makeCoreDump({ elf: build.elf, stackPadding: 16 * (i + 1) }))));
    await sendDump(units[0]!, makeCoreDump({ elf: build.elf, calls: ['read_sensor', 'calibrate', 'calibration_task'], panicDetails: 'abort() was called at PC 0x42000040 on core 0' }));
    const list = await eventually(() => decodedGroups(), (found) => found.length === 2 && found.reduce((sum, g) => sum + g.count, 0) === 4);
    const byReason = Object.fromEntries(list.map((group) => [group.reason, group]));
    expect(byReason.load_access_fault).toMatchObject({ count: 3, devices: 3 });
    expect(byReason.abort).toMatchObject({ count: 1, devices: 1 });
    expect(byReason.abort!.frames.map((frame: { function: string }) => frame.function)).toEqual(['read_sensor', 'calibrate', 'calibration_task']);
  });

  it('is read without an ELF, and decoded once the ELF comes', async () => {
    const build = await release('2.2.0');
    await sendDump(await device('early'), makeCoreDump({ elf: build.elf, checksum: 'sha256' }));
    const [read] = await decodedGroups();
    expect(read).toMatchObject({ decoding: 'read', reason: 'load_access_fault', build_number: build.buildNumber });
    expect(read!.frames).toEqual([{ function: '', file: '', line: 0, address: expect.stringMatching(/^0x4200/) }]);
    const sample = (await api('GET', `${projectPath()}/crashes/${read!.id}/`, { token: f.user.token })).body.samples[0];
    expect(sample.decoding_note).toMatch(/has no ELF/);

    expect((await putElf(build.id, build.elf)).status).toBe(200);
    const [decoded, ...rest] = await eventually(() => groups(), (list) => list.length === 1 && list[0]!.decoding === 'decoded');
    expect(rest).toEqual([]);
    expect(decoded!.frames.map((frame: { function: string }) => frame.function)).toEqual(['read_sensor', 'average_reading', 'sensor_task']);
  });

  it('from an Xtensa chip is stored and read, and says why it was not decoded', async () => {
    const build = await release('2.2.5');
    await putElf(build.id, build.elf);
    await sendDump(await device('xtensa'), makeCoreDump({ elf: build.elf, chipId: 9, panicDetails: 'abort() was called at PC 0x400d66b9 on core 0' }));
    const [group] = await decodedGroups();
    expect(group).toMatchObject({ decoding: 'read', reason: 'abort', build_number: build.buildNumber });
    const sample = (await api('GET', `${projectPath()}/crashes/${group!.id}/`, { token: f.user.token })).body.samples[0];
    expect(sample).toMatchObject({ chip: 'esp32s3', decoding: 'read', decoding_note: expect.stringMatching(/Xtensa.*not unwound/) });
  });

  it('is blamed on the build the device reported when no build has the ELF it names', async () => {
    const build = await release('2.3.0');
    const unit = await device('reported');
    const health = { reset_reason: 'power_on', boots: 1, abnormal_boots: 0, uptime_seconds: 60 };
    expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(unit, { chip_family: 'esp32c3', current_build_number: build.buildNumber, health }) })).status).toBe(200);
    const receipt = await sendDump(unit, makeCoreDump({ elf: build.elf, elfSha256: 'ab'.repeat(32) }));
    const [group] = await decodedGroups();
    expect(group).toMatchObject({ artifact_id: build.id });
    const sample = (await api('GET', `${projectPath()}/crashes/${group!.id}/`, { token: f.user.token })).body.samples[0];
    expect(sample).toMatchObject({ id: receipt.crash_id, attribution: 'device_build', elf_sha256_prefix: 'ababababa' });
  });

  it('sent by several clients at once is stored once', async () => {
    const build = await release('2.4.0');
    const unit = await device('racing');
    const dump = makeCoreDump({ elf: build.elf });
    const receipts = await Promise.all(Array.from({ length: 5 }, () => sendDump(unit, dump)));
    expect(new Set(receipts.map((receipt) => receipt.crash_id)).size).toBe(1);
    const [group] = await decodedGroups();
    expect(group).toMatchObject({ count: 1, devices: 1 });
  });
});

describe('crashes of a build', () => {
  it('are told apart from those earlier builds had, and narrowed to a deployment since it started', async () => {
    const first = await release('5.0.0');
    const second = await release('5.1.0');
    await Promise.all([putElf(first.id, first.elf), putElf(second.id, second.elf)]);
    const unit = await device('two-builds');
    await sendDump(unit, makeCoreDump({ elf: first.elf }));
    const created = await api('POST', `${projectPath()}/deployments/`, { token: f.user.token, json: { artifact_id: second.id, target_channel_ids: [f.defaultChannelId] } });
    expect(created.status).toBe(201);
    await sendDump(unit, makeCoreDump({ elf: second.elf, stackPadding: 8 }));
    await sendDump(unit, makeCoreDump({ elf: second.elf, calls: ['read_sensor', 'calibrate', 'calibration_task'] }));
    await eventually(() => decodedGroups(), (list) => list.length === 3);

    const ofSecond = await groups(`?artifact_id=${second.id}`);
    const byTop = Object.fromEntries(ofSecond.map((group) => [group.frames[1].function, group]));
    expect(byTop.average_reading).toMatchObject({ build_number: second.buildNumber, new_in_build: false });
    expect(byTop.calibrate).toMatchObject({ build_number: second.buildNumber, new_in_build: true });
    expect((await groups(`?artifact_id=${first.id}`))[0]).toMatchObject({ new_in_build: true });

    // A draft has not started: the deployment's crashes are its build's since it was created.
    expect(await groups(`?deployment_id=${created.body.id}`)).toHaveLength(2);
    expect((await api('GET', `${projectPath()}/crashes/?deployment_id=00000000-0000-4000-8000-000000000000`, { token: f.user.token })).status).toBe(404);
    expect((await api('GET', `${projectPath()}/crashes/?since=2026-13-01T00:00:00Z`, { token: f.user.token })).status).toBe(422);
    expect(await groups(`?since=${new Date(Date.now() + 60_000).toISOString()}`)).toEqual([]);
  });
});

describe('refused, with nothing stored', () => {
  let unit: string;
  let dump: Buffer;
  beforeEach(async () => {
    const build = await release('3.0.0');
    unit = await device('refused');
    dump = makeCoreDump({ elf: build.elf });
  });

  const refusals: Array<[string, () => Buffer, RegExp]> = [
    ['garbage', () => randomBytes(3000), /not a core dump the service can read: not an ESP-IDF core dump/],
    ['a truncated dump', () => dump.subarray(0, dump.length - 100), /truncated/],
    [
      'a dump whose checksum does not match',
      () => {
        const broken = Buffer.from(dump);
        broken[200]! ^= 0xff;
        return broken;
      },
      /CRC-32 does not match/,
    ],
    [
      'a core file whose segments run past its end',
      () => {
        // The header and checksum made right around an ELF whose first segment claims 1 MB.
        const elf = Buffer.from(dump.subarray(24, dump.length - 4));
        elf.writeUInt32LE(0x100000, 52 + 16);
        return rewrap(dump, elf);
      },
      /runs past the end of the core file/,
    ],
  ];
  it.each(refusals)('%s is 400', async (_what, make, detail) => {
    const bad = make();
    let answer = await sendPiece(unit, bad, 0, bad.subarray(0, 2048));
    for (let offset = 2048; answer.status === 200 && !answer.body.complete && offset < bad.length; offset += 2048) answer = await sendPiece(unit, bad, offset, bad.subarray(offset, offset + 2048));
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(detail);
    expect(await groups()).toEqual([]);
  });

  it('pieces that are not the SHA-256 they were named by are 400, and the upload starts over', async () => {
    const answer = await sendPiece(unit, dump, 0, dump, sha(Buffer.from('another dump')));
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/do not have the SHA-256 the upload named/);
    expect((await sendDump(unit, dump)).complete).toBe(true);
  });

  it('a piece or a dump past the limits is 413', async () => {
    const tooMany = Buffer.alloc(64 * 1024 + 1);
    expect((await sendPiece(unit, Buffer.alloc(2 * 1024 * 1024), 0, tooMany)).status).toBe(413);
    expect((await sendPiece(unit, Buffer.alloc(64 * 1024 + 1), 0, tooMany)).status).toBe(413);
  });

  it('a device the project has not seen is 404', async () => {
    const answer = await sendPiece('never-checked-in', dump, 0);
    expect(answer.status).toBe(404);
  });

  it('a device past its dumps for the hour is 429, and may finish what it started', async () => {
    const build = await release('3.1.0');
    for (let i = 0; i < 4; i++) await sendDump(unit, makeCoreDump({ elf: build.elf, stackPadding: 4 * i }));
    const fifth = await sendPiece(unit, makeCoreDump({ elf: build.elf, stackPadding: 64 }), 0);
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get('retry-after')).toBeTruthy();
  });
});

describe("a build's ELF", () => {
  it('must be the ELF the image names, an ELF at all, and is not replaced', async () => {
    const build = await release('4.0.0');
    const other = makeEspBuild({ crashCode: true, version: '4.0.1' });
    const wrong = await putElf(build.id, other.elf);
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toMatch(/not the ELF build \d+'s image was made from/);
    expect((await putElf(build.id, randomBytes(1000))).body.detail).toMatch(/not an ELF file/);
    expect((await putElf(build.id, build.elf)).status).toBe(200);
    expect((await putElf(build.id, build.elf)).status).toBe(200);
    expect((await putElf('00000000-0000-4000-8000-000000000000', build.elf)).status).toBe(404);
  });

  it('needs an operator', async () => {
    const build = await release('4.1.0');
    const viewer = createUser();
    await grantRole(f, viewer, 'viewer');
    const answer = await api('PUT', `${projectPath()}/artifacts/${build.id}/elf/`, { token: viewer.token, body: build.elf });
    expect(answer.status).toBe(403);
    expect((await api('PUT', `${projectPath()}/artifacts/${build.id}/elf/`, { token: f.deviceScopeToken, body: build.elf })).status).toBe(401);
  });
});

/** The same header and a CRC-32 made right around another core file. */
function rewrap(dump: Buffer, elf: Buffer): Buffer {
  const header = Buffer.from(dump.subarray(0, 24));
  header.writeUInt32LE(24 + elf.length + 4, 0);
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(crc32(Buffer.concat([header, elf])) >>> 0);
  return Buffer.concat([header, elf, crc]);
}
