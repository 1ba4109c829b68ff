export { api, adminCommand, createUser, uploadForm, type ApiResponse, type CreatedUser } from './api';
export { testStack, type TestStack } from './stack-env';
export { MANIFEST, checkBody, eventually, setupProject, type ProjectFixture } from './fixtures';
