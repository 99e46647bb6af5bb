// `npm run test:e2e`: the walks that pack packages and install them with npm in temp dirs (the
// plugin author's path from the tarballs, `add` / `remove` for real). Minutes of npm, mostly
// waiting on it: kept out of `npm test`, run by CI after it. Both files at once, the longest first.
module.exports = {
  ...require('./.mocharc.json'),
  parallel: true,
  jobs: 2,
  spec: ['test/e2e/author-path.e2e.ts', 'test/e2e/add.e2e.ts'],
};
