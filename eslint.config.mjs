// ESLint flat config: typescript-eslint `recommended` (syntax only, not the
// type-checked set: no TypeScript program is built, so it stays fast on 2 cores;
// `npm run typecheck` does the type checking). Style is prettier's job
// (.prettierrc): eslint-config-prettier, last, turns off every rule that could
// disagree with it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// A leading `_` marks a parameter kept for its position (transport hooks, factories
// of one signature) or a field dropped by a rest destructuring (`{ owner: _owner, ...rest }`).
const unusedVars = {
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrorsIgnorePattern: '^_',
  destructuredArrayIgnorePattern: '^_',
  ignoreRestSiblings: true,
};

export default defineConfig(
  // Build output, coverage, scratch (the tests' .tmp/) and generated bench results.
  { ignores: ['dist/', 'coverage/', '.tmp/', 'bench/results/'] },

  js.configs.recommended,
  tseslint.configs.recommended,

  {
    // lib/, adapters/, test/, sample-app/, bench/, scripts/ and the root config files:
    // everything runs on Node (the .mjs benches, scripts and test workers too).
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_`-prefixed names are unused on purpose (see unusedVars above).
      '@typescript-eslint/no-unused-vars': ['error', unusedVars],
      // A `let` read in a closure declared before its one assignment stays `let`:
      // as a `const` the closure could run in its temporal dead zone (SlotGate.releaser).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },

  {
    // Types imported only for a JSDoc {@link}, which no-unused-vars does not count as a use.
    files: ['adapters/redis/lease.interface.ts', 'lib/observability/events/rate-limit-events.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { ...unusedVars, varsIgnorePattern: '^(_|ConsumeRequest$|RateLimitEventMap$)' },
      ],
    },
  },

  {
    // Decorator implementations: TypeScript's ClassDecorator is typed over `Function`,
    // so a decorator target is cast to it to reach Nest's class-decorator overloads.
    files: ['lib/decorators/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-function-type': 'off' },
  },

  {
    // @nestjs/throttler's own test suite, copied as is but for its import lines (NOTICE.md there).
    files: ['test/throttler-compat/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/ban-ts-comment': 'off',
    },
  },
  {
    // The CommonJS consumer test (test/cjs-consumer/app.cjs) exists to call require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },

  prettier,
);
