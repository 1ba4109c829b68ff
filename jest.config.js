/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/services', '<rootDir>/libs', '<rootDir>/deploy', '<rootDir>/bench', '<rootDir>/device-sdk'],
  testMatch: ['**/src/**/*.test.ts', '**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  globalSetup: '<rootDir>/libs/testkit/dist/jest-global-setup.js',
  globalTeardown: '<rootDir>/libs/testkit/dist/jest-global-teardown.js',
  // Every test file shares one stack, so files run one at a time: a measurement such as the upload
  // memory test must see only its own traffic, and the fleet tests must not overload each other.
  maxWorkers: 1,
  testTimeout: 60_000,
};
