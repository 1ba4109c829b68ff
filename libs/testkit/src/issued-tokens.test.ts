import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTokensInLogs, recordIssuedTokens } from './issued-tokens';

const PAT = 'ota_pat_Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg';
const DEVICE = 'ota_dev_c2Vjb25kc2Vjb25kc2Vjb25kc2Vjb25kc2Vjb25k';

describe('the log scan for raw tokens', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ota-token-scan-'));
  const tokensFile = join(dir, 'issued.txt');
  const logDir = mkdtempSync(join(dir, 'logs-'));

  test('records raw tokens from answers, nested or in lists, and nothing else', () => {
    recordIssuedTokens(tokensFile, { token: PAT, prefix: PAT.slice(0, 12) });
    recordIssuedTokens(tokensFile, [{ device: { token: DEVICE } }]);
    recordIssuedTokens(tokensFile, { token: 'not-a-token', name: PAT });
    expect(readFileSync(tokensFile, 'utf8').split('\n').filter(Boolean)).toEqual([PAT, DEVICE]);
  });

  test('finds a token, or its random part alone, on the line it was written to, and reports only its prefix', () => {
    writeFileSync(join(logDir, 'gateway.log'), `{"msg":"fine"}\n{"msg":"leak","auth":"Bearer ${PAT}"}\n`);
    writeFileSync(join(logDir, 'registry.log'), `{"msg":"random part: ${DEVICE.slice(8)}"}\n`);
    writeFileSync(join(logDir, 'notes.txt'), PAT);
    const scan = findTokensInLogs(tokensFile, logDir);
    expect(scan).toEqual({
      tokens: 2,
      files: 2,
      sightings: [
        { file: 'gateway.log', line: 2, prefix: PAT.slice(0, 12) },
        { file: 'registry.log', line: 1, prefix: DEVICE.slice(0, 12) },
      ],
    });
  });

  test('finds nothing in clean logs', () => {
    writeFileSync(join(logDir, 'gateway.log'), `{"msg":"prefix only ${PAT.slice(0, 12)}"}\n`);
    writeFileSync(join(logDir, 'registry.log'), '');
    expect(findTokensInLogs(tokensFile, logDir).sightings).toEqual([]);
  });
});
