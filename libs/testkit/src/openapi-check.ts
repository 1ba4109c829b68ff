import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

interface OperationDoc {
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}

interface Matcher {
  method: string;
  pattern: RegExp;
  template: string;
  operation: OperationDoc;
}

/**
 * Checks answers against the gateway's own OpenAPI document: the status must be documented for
 * the operation, and a JSON body must match its schema. Every test that calls the API through the
 * test kit checks every answer this way.
 */
export class OpenApiCheck {
  private readonly matchers: Matcher[] = [];
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<object, ValidateFunction>();
  private readonly components: object;

  constructor(document: { paths: Record<string, Record<string, OperationDoc>>; components?: object }) {
    addFormats(this.ajv);
    this.components = document.components ?? {};
    for (const [template, methods] of Object.entries(document.paths)) {
      // A trailing slash is optional, as the router treats it.
      const source = template.replace(/\/$/, '').replace(/\{[^}]+\}/g, '[^/]+');
      const pattern = new RegExp(`^${source}/?$`);
      for (const [method, operation] of Object.entries(methods)) {
        this.matchers.push({ method: method.toUpperCase(), pattern, template, operation });
      }
    }
  }

  /** Throws with a readable reason when the answer breaks the document. */
  check(method: string, path: string, status: number, contentType: string, body: unknown): void {
    const pathname = new URL(path, 'http://x').pathname;
    if (!pathname.startsWith('/api/v1/') || pathname === '/api/v1/openapi.json') return;
    const matcher = this.matchers.find((candidate) => candidate.method === method.toUpperCase() && candidate.pattern.test(pathname));
    if (!matcher) {
      // The router answers unknown routes (and methods) itself; only documented ones are checked.
      return;
    }
    const response = matcher.operation.responses[String(status)];
    if (!response) throw new Error(`${method} ${matcher.template} answered ${status}, which the OpenAPI document does not list`);
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return;
    if (!contentType.includes('application/json')) throw new Error(`${method} ${matcher.template} ${status} answered ${contentType}, not JSON`);
    let validate = this.validators.get(schema);
    if (!validate) {
      // Compiled with the document's components beside it, where its `#/components/...` references point.
      validate = this.ajv.compile({ allOf: [schema], components: this.components });
      this.validators.set(schema, validate);
    }
    if (!validate(body)) {
      throw new Error(
        `${method} ${matcher.template} ${status} breaks the OpenAPI schema: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
      );
    }
  }
}
