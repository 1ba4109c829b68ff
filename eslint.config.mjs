// The lint rules this codebase holds itself to (shared/STYLE.md): promises are awaited or handed
// on explicitly, imports never form a cycle, and types are imported as types. Typed rules read the
// TypeScript project of each file through typescript-eslint's project service.
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', 'libs/proto/src/gen/**', '.data/**', '.tools/**', 'services/console/**', '**/*.js', '**/*.mjs'],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.d.ts', '.js'] })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-cycle': 'error',
    },
  },
  {
    // Tests are compiled by swc under jest, outside the packages' projects; this one gives them types.
    files: ['**/*.test.ts', '**/test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: ['./tsconfig.tests.json'], tsconfigRootDir: import.meta.dirname } },
  },
);
