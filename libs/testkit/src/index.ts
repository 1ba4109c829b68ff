export { api, adminCommand, createUser, uploadForm, type ApiResponse, type CreatedUser } from './api';
export { STACK_ENV_KEY, testStack, type TestStack } from './stack-env';
export { MANIFEST, checkBody, eventually, randomBinary, setupProject, type ProjectFixture } from './fixtures';
export { seededRandom } from './seeded-random';
export { startExtraGateway, type ExtraGateway } from './extra-gateway';
export { findTokensInLogs, recordIssuedTokens, type TokenSighting } from './issued-tokens';
export { WebhookReceiver, type ReceivedDelivery } from './webhook-receiver';
export { CLIENT as KEYCLOAK_CLIENT, signInThroughKeycloak, startKeycloak, type Keycloak, type KeycloakPerson } from './keycloak';
export { esptoolImageInfo, makeEspImage, type EspImageOptions, type EsptoolImageInfo } from './esp-images';
