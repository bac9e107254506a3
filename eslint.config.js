// Type-aware lint for the whole project; CI runs it with --max-warnings 0.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's describe/it return promises the runner itself tracks.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'before', 'after', 'beforeEach', 'afterEach', 'suite'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      // Imports used only as types say so, so the compiler erases them and the import graph shows what loads.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports' },
      ],
    },
  },
  // Size: no source file over 500 lines, no function over 120. Lines are counted as `wc -l` counts them,
  // comments and blank lines included: the figure the linter reports is the one a reader scrolls through and
  // the one the docs quote, and a long comment is as much to read as code. Tests and test harnesses are
  // exempt (a table of cases is long by nature).
  {
    files: ['**/*.ts'],
    ignores: ['**/*.test.ts', 'test/**'],
    rules: {
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['error', { max: 120 }],
    },
  },
  // The allow-list. Each entry says why; remove an entry when its reason goes away.
  // Layering: dependencies point one way, cmd -> pkg -> api (docs/architecture.md). Import cycles are
  // checked by hack/import-cycles.ts.
  {
    files: ['api/**/*.ts'],
    ignores: ['api/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/pkg/**', '**/cmd/**'],
              message: 'api/ is data, defaults, validation and conversion: it imports nothing from pkg/ or cmd/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['pkg/engine/**/*.ts', 'pkg/image/**/*.ts', 'pkg/yaml/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['kube', 'controller', 'cli', 'webhook', 'cluster', 'fleet', 'ui', 'cmd']
                .flatMap((d) => [`../${d}/**`, `../../${d}/**`, `../../pkg/${d}/**`])
                .concat(['@kubernetes/client-node']),
              message:
                'The engine is pure: it imports nothing from the shells (kube, controller, cli, webhook, cluster, fleet).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['pkg/kube/**/*.ts', 'pkg/controller/**/*.ts', 'pkg/cluster/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../fleet/**', '../../pkg/fleet/**', '../ui/**', '../../pkg/ui/**'],
              message:
                'pkg/fleet reads the hub for the status command and the web view (pkg/ui); the layers they read do not import them.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['pkg/fleet/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../ui/**', '../../pkg/ui/**'], message: 'pkg/ui imports pkg/fleet, never the other way.' },
          ],
        },
      ],
    },
  },
);
