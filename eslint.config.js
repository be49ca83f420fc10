// ESLint's flat config for the web app (transcriber/web/assets): plain ES
// modules in a browser, no build step. The recommended rules plus a few that
// catch what the CSP or the house rules forbid (eval, implied eval). Run by
// tests/unit/web/test_js_checks.py; the packages are pinned in package.json.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["transcriber/web/assets/**/*.js", "tests/unit/web/js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // The app's CSP refuses these; the linter says so before a browser does.
      "no-eval": "error",
      "no-implied-eval": "error",
      "no-new-func": "error",
      "no-script-url": "error",
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
      "no-unused-vars": ["error", { args: "after-used", argsIgnorePattern: "^_",
        caughtErrors: "none" }],
      "no-shadow": "error",
      "no-use-before-define": ["error", { functions: false, classes: true, variables: false }],
      curly: ["error", "multi-line"],
    },
  },
];
