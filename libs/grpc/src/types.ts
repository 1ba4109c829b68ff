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
