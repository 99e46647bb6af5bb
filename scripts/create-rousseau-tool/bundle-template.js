// `npm pack` / `npm publish` hooks: a package cannot ship files from outside its folder, so the
// template is copied in before packing (prepack) and removed after (postpack), so a stale copy
// never shadows the live template in the repo.
import { rmSync } from 'node:fs';
import { copyTemplate, PACKED_TEMPLATE, REPO_TEMPLATE } from './template.js';

rmSync(PACKED_TEMPLATE, { recursive: true, force: true });
if (!process.argv.includes('--clean')) copyTemplate(REPO_TEMPLATE, PACKED_TEMPLATE);
