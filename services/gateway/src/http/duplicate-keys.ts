/**
 * JSON.parse keeps the last of two equal keys in an object, so `{"action":"cancel","action":"ramp"}`
 * would ramp: a body that says two things is refused instead (docs/api.md, "Conventions"). Scans
 * the raw text of a body that already parsed, without recursion, and compares keys as JSON.parse
 * decodes them ("a" and "\u0061" are one key).
 */

/** An open object (its keys so far, and the one whose value is being read) or array (the element's index). */
type Frame = { kind: 'object'; keys: Set<string>; key: string; expectKey: boolean } | { kind: 'array'; index: number };

/** Where the first repeated key stands: the path to its object, then the key; undefined when none repeats. */
export function firstDuplicateKey(text: string): string[] | undefined {
  const frames: Frame[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at]!;
    const frame = frames.at(-1);
    if (char === '"') {
      const end = endOfString(text, at);
      if (frame?.kind === 'object' && frame.expectKey) {
        const key = JSON.parse(text.slice(at, end + 1)) as string;
        if (frame.keys.has(key)) return [...frames.slice(0, -1).map(stepOf), key];
        frame.keys.add(key);
        frame.key = key;
        frame.expectKey = false;
      }
      at = end + 1;
      continue;
    }
    if (char === '{') frames.push({ kind: 'object', keys: new Set(), key: '', expectKey: true });
    else if (char === '[') frames.push({ kind: 'array', index: 0 });
    else if (char === '}' || char === ']') frames.pop();
    else if (char === ',' && frame?.kind === 'object') frame.expectKey = true;
    else if (char === ',' && frame?.kind === 'array') frame.index += 1;
    at += 1;
  }
  return undefined;
}

function stepOf(frame: Frame): string {
  return frame.kind === 'object' ? frame.key : String(frame.index);
}

/** The index of the quote that closes the string opening at `start` (the text is valid JSON). */
function endOfString(text: string, start: number): number {
  let at = start + 1;
  while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
  return at;
}
