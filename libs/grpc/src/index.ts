export { GrpcServer, type CallContext, type Handlers, type GrpcServerDeps } from './server';
export { createServiceClient, type CallOptions, type ClientSettings, type ServiceClient } from './client';
export { RpcError, errorOfStatus, statusOfError } from './status';
export { grpcClientMetrics, grpcCodeLabel, grpcServerMetrics } from './metrics';
export type { MethodDefinition, RequestOf, ResponseOf } from './types';
export { runService, runUntilSignalled, type ServiceProcess, type Stopper } from './lifecycle';
export { commonServiceSettings, metricsEventLoopResolutionSetting, mongodbCommandMetricsSetting } from './service-config';
export { serveGrpc, type ServeSettings } from './serve';
