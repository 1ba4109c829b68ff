import { oneOf, port, str } from '@ota/config';
import { DEFAULT_SERVER_PORTS } from './stack';

export const localStackSettings = {
  GATEWAY_PORT: port('port the gateway serves on', 8080),
  LOCAL_STACK_PORTS: oneOf(
    'default: the fixed ports below and 50051-50054 (services), 9100-9104 (metrics); random: free ports for all but the gateway, to run a second stack beside the first',
    ['default', 'random'] as const,
    'default',
  ),
  LOCAL_POSTGRES_PORT: port('port of the local PostgreSQL under FerretDB (with LOCAL_STACK_PORTS=default)', DEFAULT_SERVER_PORTS.postgres),
  LOCAL_FERRETDB_PORT: port('port of the local FerretDB, when MONGODB_URI is not set (with LOCAL_STACK_PORTS=default)', DEFAULT_SERVER_PORTS.mongo),
  LOCAL_NATS_PORT: port('port of the local nats-server, when NATS_URL is not set (with LOCAL_STACK_PORTS=default)', DEFAULT_SERVER_PORTS.nats),
  LOCAL_S3_PORT: port('port of the local s3rver, when S3_ENDPOINT is not set (with LOCAL_STACK_PORTS=default)', DEFAULT_SERVER_PORTS.s3),
  LOCAL_STACK_DATA_DIR: str('where the local FerretDB, s3rver and nats-server keep their data', '.data/local'),
  LOCAL_MONGODB_BACKEND: oneOf(
    'backend of the local FerretDB when MONGODB_URI is not set: postgresql (a private cluster of Debian PostgreSQL) or sqlite',
    ['postgresql', 'sqlite'] as const,
    'postgresql',
  ),
  LOG_LEVEL: oneOf('log level of every service', ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const, 'info'),
};
