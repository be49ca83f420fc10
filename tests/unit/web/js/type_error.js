// @ts-check
// A fixture for tests/unit/web/test_js_checks.py: one type error the checker
// must refuse, under the app's own settings (tsconfig.json here extends the root's).

import { duration } from "../../../../transcriber/web/assets/format.js";

/** @type {string} */
export const shown = duration("65000");
