// `npm test`'s config (.mocharc.suite.cjs) with the per-file hooks of `scripts/test-cpu.sh`.
const suite = require('../../.mocharc.suite.cjs');

module.exports = { ...suite, require: [...[suite.require ?? []].flat(), require.resolve('./hooks.cjs')] };
