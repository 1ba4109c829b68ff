import type { Dashboard, Panel, RowPanel, VariableModel } from '@grafana/schema';

/** Every query goes to the data source the viewer picks in the `datasource` variable. */
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/**
 * Every selector carries this matcher, so one Grafana can watch each installation (namespace)
 * apart. Where no `namespace` label exists (a Prometheus scraping a workstation), `.*` matches.
 */
export const IN_NAMESPACE = 'namespace=~"$namespace"';

export interface Query {
  expr: string;
  /** The legend of each series, e.g. `{{status}}`. */
  legend?: string;
  /** For tables: one row per series at the end of the range, not a series over time. */
  instant?: boolean;
}

interface PanelSpec {
  title: string;
  description: string;
  queries: Query[];
  unit?: string;
  /** Grid columns (of 24) the panel takes; rows of panels wrap by themselves. */
  width?: number;
  height?: number;
}

/** A row header, or a panel with the grid cells it takes. */
export type Block = { row: string } | { panel: Omit<Panel, 'id' | 'gridPos'>; size: { w: number; h: number } };

function targetsOf(queries: Query[]): Panel['targets'] {
  return queries.map((query, index) => ({
    refId: String.fromCharCode(65 + index),
    datasource: DATASOURCE,
    expr: query.expr,
    legendFormat: query.legend ?? '__auto',
    ...(query.instant ? { instant: true, range: false, format: 'table' } : { range: true }),
  }));
}

function panel(type: string, spec: PanelSpec, options: Record<string, unknown>, custom: Record<string, unknown> = {}): Block {
  return {
    panel: {
      type,
      title: spec.title,
      description: spec.description,
      datasource: DATASOURCE,
      targets: targetsOf(spec.queries),
      fieldConfig: { defaults: { unit: spec.unit ?? 'short', custom }, overrides: [] },
      options,
    },
    size: { w: spec.width ?? 12, h: spec.height ?? 8 },
  };
}

export function timeseries(spec: PanelSpec & { stacked?: boolean }): Block {
  return panel(
    'timeseries',
    spec,
    { legend: { displayMode: 'table', placement: 'right', calcs: ['lastNotNull', 'max'] }, tooltip: { mode: 'multi', sort: 'desc' } },
    { drawStyle: 'line', lineWidth: 1, fillOpacity: spec.stacked ? 40 : 10, stacking: { mode: spec.stacked ? 'normal' : 'none', group: 'A' } },
  );
}

export function stat(spec: PanelSpec): Block {
  return panel('stat', { width: 6, height: 5, ...spec }, { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'area', textMode: 'auto' });
}

/** One bar per series, split by a label: how a rollout's devices stand, drawn. */
export function barGauge(spec: PanelSpec): Block {
  return panel('bargauge', spec, { orientation: 'horizontal', displayMode: 'gradient', showUnfilled: true, reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false } });
}

export function table(spec: PanelSpec): Block {
  return panel('table', { ...spec, queries: spec.queries.map((query) => ({ ...query, instant: true })) }, { showHeader: true, cellHeight: 'sm' });
}

/** Lays the blocks out left to right, wrapping at 24 columns, a row header starting a new line. */
function layout(blocks: Block[]): Array<Panel | RowPanel> {
  const panels: Array<Panel | RowPanel> = [];
  let x = 0;
  let y = 0;
  let lineHeight = 0;
  for (const block of blocks) {
    const id = panels.length + 1;
    if ('row' in block) {
      y += lineHeight;
      panels.push({ type: 'row', id, title: block.row, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] });
      y += 1;
      x = 0;
      lineHeight = 0;
      continue;
    }
    const { panel, size } = block;
    if (x + size.w > 24) {
      x = 0;
      y += lineHeight;
      lineHeight = 0;
    }
    panels.push({ ...panel, id, gridPos: { x, y, w: size.w, h: size.h } });
    x += size.w;
    lineHeight = Math.max(lineHeight, size.h);
  }
  return panels;
}

const VARIABLES: VariableModel[] = [
  { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', hide: 0, refresh: 1 },
  {
    name: 'namespace',
    label: 'Namespace',
    type: 'query',
    datasource: DATASOURCE,
    query: { query: 'label_values(ota_ready, namespace)', refId: 'namespaces' },
    includeAll: true,
    allValue: '.*',
    multi: false,
    current: { text: 'All', value: '$__all' },
    refresh: 2,
    hide: 0,
  },
];

/** A dashboard of the chart: its uid is also its file name under helm/ota/monitoring/dashboards. */
export function dashboard(uid: string, title: string, description: string, blocks: Block[]): Dashboard {
  const board: Dashboard = {
    uid,
    title,
    description,
    tags: ['ota'],
    editable: false,
    graphTooltip: 1,
    refresh: '30s',
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    templating: { list: VARIABLES },
    annotations: { list: [] },
    links: [],
    panels: layout(blocks),
  };
  return board;
}
