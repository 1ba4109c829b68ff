/** True for a unique-index violation (E11000), which both MongoDB and FerretDB report as code 11000. */
export function isDuplicateKey(error: unknown): boolean {
  return (error as { code?: number })?.code === 11000;
}
