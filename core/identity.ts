/** How the host names itself to MCP peers, as a server (`serverInfo`) and as a client (`clientInfo`). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './paths.ts';

export const HOST_INFO = {
  name: 'rousseau-host',
  version: (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
};
