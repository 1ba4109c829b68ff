import { loadConfig } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const telemetrySettings = {
  ...commonServiceSettings({ grpcPort: 50054, metricsPort: 9104, database: 'ota_telemetry' }),
};

export type TelemetryConfig = ReturnType<typeof loadTelemetryConfig>;
export const loadTelemetryConfig = () => loadConfig(telemetrySettings);
