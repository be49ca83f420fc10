// A fixture for tests/unit/web/test_js_checks.py: code the app's CSP refuses
// (eval), which the linter must refuse first.

export function run(source) {
  return eval(source);
}
