// The metric families a PromQL expression reads, for the tests that hold every alert and dashboard
// panel to the metrics the processes really serve. Not a PromQL parser: it drops what cannot
// name a metric (strings, label matchers, grouping clauses, durations), then takes the names of
// our families (and Node's and Prometheus's) that remain.
const FAMILY_PREFIXES = /^(ota_|http_|grpc_|process_|nodejs_)/;
const HISTOGRAM_SERIES = /_(bucket|count|sum)$/;

export function metricNamesOf(expression: string): string[] {
  const stripped = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const [token] of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    if (FAMILY_PREFIXES.test(token)) names.add(token);
  }
  return [...names];
}

/** The family a series name belongs to: a histogram's `_bucket`, `_count` and `_sum` are its own. */
export function familyOf(seriesName: string, families: ReadonlySet<string>): string {
  if (families.has(seriesName)) return seriesName;
  const base = seriesName.replace(HISTOGRAM_SERIES, '');
  return families.has(base) ? base : seriesName;
}
