import type { Api, BodyOf } from '../src/client';

// The compiler holds otactl to the OpenAPI document: each call below is one the document does not
// have, and each must stay a type error. If the API grows such a path or field, the compile of
// tsconfig.contract.json (client-contract.test.ts) fails here on the unused @ts-expect-error, and
// this file is updated on purpose. Never called, and not shipped: it lives beside the tests.
export function callsTheDocumentDoesNotHave(api: Api): void {
  // @ts-expect-error a path the API does not have
  void api.GET('/api/v1/projects/{id}/rollbacks/', { params: { path: { id: '' } } });
  // @ts-expect-error a method the path does not take
  void api.DELETE('/api/v1/projects/{id}/deployments/{did}/', { params: { path: { id: '', did: '' } } });
  // @ts-expect-error a body field the operation does not take (bodies are declared with BodyOf)
  const body: BodyOf<'createDeployment'> = { artifact_id: '', target_group_names: ['canary'] };
  void body;
  // @ts-expect-error a body field of the wrong type
  void api.POST('/api/v1/projects/{id}/deployments/', { params: { path: { id: '' } }, body: { artifact_id: 42 } });
  // @ts-expect-error a transition the API does not know
  void api.POST('/api/v1/projects/{id}/deployments/{did}/transition/', { params: { path: { id: '', did: '' } }, body: { action: 'rollback' } });
}
