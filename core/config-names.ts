/**
 * Where the host's config search looks in a folder (core/config.ts: cosmiconfig's places and the
 * host's own extensions), package.json aside: the files that are the host's config. The config is
 * code the host runs at its next start, outside every sandbox and rule, where a model allowed to
 * write in the workspace could give itself any tool and any policy: the built-in file tools refuse
 * to write these names, and the command sandbox keeps them read-only, as it does `.git`.
 */
export const CONFIG_FILES: readonly string[] = [
  ...['', '.json', '.yaml', '.yml', '.js', '.ts', '.cjs', '.mjs'].flatMap((ext) => [
    `.rousseaurc${ext}`,
    `.config/rousseaurc${ext}`,
  ]),
  ...['js', 'ts', 'cjs', 'mjs', 'mts', 'cts', 'json', 'yaml', 'yml'].map((ext) => `rousseau.config.${ext}`),
];
