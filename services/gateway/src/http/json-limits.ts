/**
 * The shape every JSON body the gateway parses must keep (docs/api.md, "Limits"): nested at most
 * MAX_JSON_DEPTH levels and at most MAX_JSON_ELEMENTS values in all. Checked without recursion right
 * after parsing, before any handler runs, so that no body can exhaust the stack of a later
 * JSON.stringify or of a reader that parses what was stored.
 */
export const MAX_JSON_DEPTH = 32;
export const MAX_JSON_ELEMENTS = 10_000;

/** Why `value` breaks the limits, or undefined when it keeps them. The root object is level 1. */
export function jsonShapeProblem(value: unknown, maxDepth = MAX_JSON_DEPTH, maxElements = MAX_JSON_ELEMENTS): string | undefined {
  const pending: Array<[unknown, number]> = [[value, 1]];
  let elements = 0;
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    elements += 1;
    if (elements > maxElements) return `the JSON body holds more than ${maxElements} values`;
    if (current === null || typeof current !== 'object') continue;
    if (depth > maxDepth) return `the JSON body nests deeper than ${maxDepth} levels`;
    for (const inner of Object.values(current)) pending.push([inner, depth + 1]);
  }
  return undefined;
}

/** How deep `value` nests (a scalar is 0, `{}` is 1), counting no further than `limit + 1`. */
export function jsonDepth(value: unknown, limit: number): number {
  const pending: Array<[unknown, number]> = [[value, 0]];
  let deepest = 0;
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const inner of Object.values(current)) pending.push([inner, depth + 1]);
  }
  return deepest;
}
