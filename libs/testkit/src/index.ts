export { api, adminCommand, createUser, uploadForm, type ApiResponse, type CreatedUser } from './api';
export { testStack, type TestStack } from './stack-env';
