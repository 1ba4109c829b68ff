import { api, createUser, testStack } from '@ota/testkit';

// Every process serves Prometheus metrics on its own port: Node.js defaults, HTTP and gRPC
// counters and latency histograms named as go-grpc-prometheus names them.

async function metricsOf(service: string): Promise<string> {
  const response = await fetch(testStack().metricsUrls[service]!);
  expect(response.status).toBe(200);
  return response.text();
}

it('counts HTTP requests and gRPC calls, and every process serves the Node.js defaults', async () => {
  const user = createUser();
  const created = await api('POST', '/api/v1/projects/', { token: user.token, json: { name: 'metrics' } });
  expect(created.status).toBe(201);
  expect(created.headers.get('x-request-id')).toMatch(/.+/);

  const gateway = await metricsOf('gateway');
  expect(gateway).toMatch(/http_requests_total\{method="POST",route="\/api\/v1\/projects\/",status="201",ota_component="gateway"\} \d+/);
  expect(gateway).toContain('http_request_duration_seconds_bucket');
  expect(gateway).toMatch(/grpc_client_handled_total\{grpc_type="unary",grpc_service="ota.registry.v1.RegistryService",grpc_method="createProject",grpc_code="OK",ota_component="gateway"\} \d+/);

  const registry = await metricsOf('registry');
  expect(registry).toMatch(/grpc_server_handled_total\{grpc_type="unary",grpc_service="ota.registry.v1.RegistryService",grpc_method="createProject",grpc_code="OK",ota_component="registry"\} \d+/);
  expect(registry).toContain('grpc_server_handling_seconds_bucket');

  for (const service of ['artifacts', 'rollout', 'telemetry']) {
    expect(await metricsOf(service)).toContain('process_resident_memory_bytes');
  }
});

it('passes a caller’s request id through', async () => {
  const response = await api('GET', '/healthz', { headers: { 'x-request-id': 'ci-run-42' } });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-request-id')).toBe('ci-run-42');
});
