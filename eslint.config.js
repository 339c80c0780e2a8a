// Lint with type information: the rules that need the type checker (floating and misused promises
// above all) catch what vitest, which strips types, never sees. Every rule turned off below says why.
// `npm run lint` (and CI) lints src/, web/src, test/, bench/ and scripts/.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'web/dist/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // `_name` marks a parameter or binding kept for its position or a rest-omit on purpose.
      // Route handlers and MCP tool runners are async by contract; one that awaits nothing is
      // harmless, and the promise rules above catch the real mistakes.
      '@typescript-eslint/require-await': 'off',
      // The SQL printer, the literal escaper and the stored-string check match control characters on purpose.
      'no-control-regex': 'off',
      // A `let` that a closure defined earlier reads (a timer cleared by a callback) cannot be a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests read response bodies, rows and JSON fixtures as `any` on purpose: the assertions that
    // follow check their shape, and typing every body by hand would add ceremony, not safety. The
    // promise rules and the rest of the type-checked set stay on.
    files: ['test/**/*.ts', 'test/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Benchmarks and scripts read ad hoc JSON (engine stats, reports) the same way, for the same reason.
    files: ['bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
);
