/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/services', '<rootDir>/libs'],
  testMatch: ['**/src/**/*.test.ts', '**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  globalSetup: '<rootDir>/libs/testkit/dist/jest-global-setup.js',
  globalTeardown: '<rootDir>/libs/testkit/dist/jest-global-teardown.js',
  // Every integration test file shares one stack; two workers keep the 2-core machine responsive.
  maxWorkers: 2,
  testTimeout: 60_000,
};
