import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chartDashboards, dashboardJson } from './index';

// Writes the chart's dashboards: `npm run dashboards` after changing one (a test checks the files
// are what the code makes).
const directory = join(__dirname, '..', '..', '..', 'helm', 'ota', 'monitoring', 'dashboards');
for (const board of chartDashboards()) {
  const path = join(directory, `${board.uid}.json`);
  writeFileSync(path, dashboardJson(board));
  process.stdout.write(`wrote ${path}\n`);
}
