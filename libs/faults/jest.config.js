/**
 * The fault suite (`npm run test:faults`): it starts a stack of its own and kills its processes,
 * so it runs apart from `npm test` and its shared stack.
 * @type {import('jest').Config}
 */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.faults.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  maxWorkers: 1,
  testTimeout: 240_000,
};
