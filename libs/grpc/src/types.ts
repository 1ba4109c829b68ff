/** The shape of one method in a ts-proto `outputServices=grpc-js` service definition. */
export interface MethodDefinition {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  readonly requestSerialize: (value: never) => Buffer;
  readonly requestDeserialize: (bytes: Buffer) => unknown;
  readonly responseSerialize: (value: never) => Buffer;
  readonly responseDeserialize: (bytes: Buffer) => unknown;
}

export type RequestOf<M> = M extends { requestDeserialize: (bytes: Buffer) => infer R } ? R : never;
export type ResponseOf<M> = M extends { responseDeserialize: (bytes: Buffer) => infer R } ? R : never;

/** How a method streams, named as go-grpc-prometheus names it in its `grpc_type` label. */
export type CallKind = 'unary' | 'client_stream' | 'server_stream' | 'bidi_stream';

export function callKindOf(method: Pick<MethodDefinition, 'requestStream' | 'responseStream'>): CallKind {
  if (method.requestStream) return method.responseStream ? 'bidi_stream' : 'client_stream';
  return method.responseStream ? 'server_stream' : 'unary';
}

/** The CallKind of a method of a ts-proto service definition, as a type. */
export type CallKindOf<M> = M extends { requestStream: false; responseStream: false }
  ? 'unary'
  : M extends { requestStream: true; responseStream: false }
    ? 'client_stream'
    : M extends { requestStream: false; responseStream: true }
      ? 'server_stream'
      : 'bidi_stream';
