// The lint rules this codebase holds itself to: promises are awaited or handed
// on explicitly, imports never form a cycle, types are imported as types, and the boundaries of
// docs/architecture.md hold (a service imports no other service; domain code does no I/O and does
// not import its adapters), and the console's hooks keep React's rules. Typed rules read the TypeScript project of each file through
// typescript-eslint's project service.
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const SERVICES = ['artifacts', 'gateway', 'registry', 'rollout', 'telemetry'];

/** Libraries that talk to the outside world: domain code reaches them only through its ports. */
const IO_LIBRARIES = ['mongoose', 'mongodb', '@aws-sdk/*', '@nats-io/*', '@grpc/*', 'koa', '@koa/*', '@ota/mongo', '@ota/grpc', '@ota/proto', '@ota/bus', '@ota/decision-views'];

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', 'libs/proto/src/gen/**', '.data/**', '.tools/**', 'services/console/generated/**', 'services/console/vite.config.ts', '**/*.js', '**/*.mjs'],
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.d.ts', '.js'] })],
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // An import or a name nobody reads is a reader's false lead; a leading underscore says it is
      // unused on purpose (a parameter an interface requires, a field a rest pattern leaves out).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-cycle': 'error',
      // A relative import of a file that moved or was renamed; tests are not type-checked outside jest,
      // so without this a stale path shows only when its suite runs. Packages are the build's to resolve.
      'import-x/no-unresolved': ['error', { ignore: ['^[^.]'] }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            ...SERVICES.map((service) => ({
              target: `./services/${service}`,
              from: SERVICES.filter((other) => other !== service).map((other) => `./services/${other}`),
              message: 'a service does not import another service: ask it over gRPC, or move shared code to libs/',
            })),
            {
              // The gateway's inner folders name ports (auth/ports.ts, use-cases/ports.ts); main.ts hands them the adapters.
              target: ['./services/gateway/src/auth', './services/gateway/src/use-cases', './services/gateway/src/http', './services/gateway/src/routes', './services/gateway/src/app.ts', './services/gateway/src/deps.ts'],
              from: ['./services/gateway/src/adapters', './services/gateway/src/main.ts'],
              message: "the gateway's inner code names a port, not an adapter: main.ts wires the adapters in",
            },
            {
              // A use case takes inputs of its own; the route maps the validated HTTP body onto them.
              target: './services/gateway/src/use-cases',
              from: ['./services/gateway/src/http', './services/gateway/src/routes'],
              message: 'a use case does not know HTTP: declare its input in the use case, and let the route map the body onto it',
            },
            ...SERVICES.map((service) => ({
              target: `./services/${service}/src/domain`,
              from: [`./services/${service}/src/adapters`, `./services/${service}/src/grpc`, `./services/${service}/src/http`, `./services/${service}/src/main.ts`],
              message: 'domain code does not import its adapters or its inbound side: they import it',
            })),
          ],
        },
      ],
    },
  },
  {
    // The check's decision is pure, as the domains that use it must be: a library that does I/O
    // reached through it would put that I/O in every domain that imports it.
    files: ['libs/decision/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: IO_LIBRARIES, allowTypeImports: true, message: '@ota/decision does no I/O: what talks to NATS or a store goes in @ota/decision-views or a service adapter' }] },
      ],
    },
  },
  {
    files: ['services/*/src/domain/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            // Types of messages are allowed: the domain may name what its ports carry.
            { group: IO_LIBRARIES, allowTypeImports: true, message: 'domain code does no I/O: reach the outside world through a port (domain/ports.ts) implemented in adapters/' },
          ],
        },
      ],
    },
  },
  {
    // The gateway's use cases do no I/O either. Their ports are the services' gRPC clients, so they
    // speak the services' messages, and may use a message's enum values.
    files: ['services/gateway/src/use-cases/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: IO_LIBRARIES.filter((library) => library !== '@ota/proto'),
              allowTypeImports: true,
              message: 'a use case does no I/O: reach the outside world through a port (use-cases/ports.ts) that main.ts fills with an adapter',
            },
          ],
        },
      ],
    },
  },
  {
    // Hooks are called in the same order on every render, and an effect or memo names everything it
    // reads: a stale value in the console is a page that shows what no longer holds.
    files: ['services/console/src/**/*.ts', 'services/console/src/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // Tests are compiled by swc under jest, outside the packages' projects; this one gives them types.
    files: ['**/*.test.ts', '**/test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: ['./tsconfig.tests.json'], tsconfigRootDir: import.meta.dirname } },
  },
);
