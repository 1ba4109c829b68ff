import { oneOf, port, str } from '@ota/config';

export const localStackSettings = {
  GATEWAY_PORT: port('port the gateway serves on', 8080),
  LOCAL_STACK_PORTS: oneOf(
    'default: the documented fixed ports; random: free ports, to run a second stack beside the first',
    ['default', 'random'] as const,
    'default',
  ),
  LOCAL_STACK_DATA_DIR: str('where the local FerretDB, s3rver and nats-server keep their data', '.data/local'),
  LOCAL_MONGODB_BACKEND: oneOf(
    'backend of the local FerretDB when MONGODB_URI is not set: postgresql (a private cluster of Debian PostgreSQL) or sqlite',
    ['postgresql', 'sqlite'] as const,
    'postgresql',
  ),
  LOG_LEVEL: oneOf('log level of every service', ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const, 'info'),
};
